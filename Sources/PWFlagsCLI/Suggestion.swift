/// "Did you mean": the known word closest to a mistyped one, for the usage errors of a typo'd command or option.
enum Suggestion {
    /// The candidate within two edits of `word` (one for words of four letters or fewer, so that a short typo is
    /// not matched to an unrelated short word), the closest first; nil when none is that close.
    static func closest(to word: String, among candidates: [String]) -> String? {
        let limit = word.count <= 4 ? 1 : 2
        let scored = candidates.map { (candidate: $0, distance: distance(word, $0)) }.filter { $0.distance <= limit }
        return scored.min { $0.distance < $1.distance }?.candidate
    }

    /// ` (did you mean X?)` when a candidate is close to `word`, else nothing: appended to a usage error.
    static func hint(for word: String, among candidates: [String]) -> String {
        closest(to: word, among: candidates).map { " (did you mean \($0)?)" } ?? ""
    }

    /// The optimal string alignment distance: insertions, deletions, substitutions and swaps of two neighbours
    /// each count one, so that `gte` is one edit from `get`.
    static func distance(_ first: String, _ second: String) -> Int {
        let a = Array(first)
        let b = Array(second)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var rows = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { rows[i][0] = i }
        for j in 0...b.count { rows[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var best = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    best = min(best, rows[i - 2][j - 2] + 1)
                }
                rows[i][j] = best
            }
        }
        return rows[a.count][b.count]
    }
}
