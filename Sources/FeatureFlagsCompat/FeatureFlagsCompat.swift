/// The Pushwoosh SDK's Foundation-shaped surface over the client library: `NSError`s in
/// `PWFeatureFlagsErrorDomain` and untyped `[String: Any]` property reads.
///
/// Importing this module imports `FeatureFlags` too. An app that uses only the library's Swift API (typed reads,
/// Swift errors) imports `FeatureFlags` alone and links no Foundation, and so no ICU.
@_exported public import FeatureFlags
