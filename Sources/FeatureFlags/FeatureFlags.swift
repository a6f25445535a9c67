// FeatureFlags: filled in as the module grows.
