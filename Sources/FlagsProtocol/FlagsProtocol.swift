// FlagsProtocol: filled in as the module grows.
