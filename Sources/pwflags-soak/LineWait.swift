/// What waiting for a line gave.
enum LineWait {
    case line(String)
    case timedOut
    case closed
}
