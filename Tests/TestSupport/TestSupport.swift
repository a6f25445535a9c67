/// The test kit the bench and soak share comes with every `import TestSupport`, so a test imports one module.
@_exported public import PWFlagsTestKit
