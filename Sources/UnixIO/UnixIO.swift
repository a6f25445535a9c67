// UnixIO: filled in as the module grows.
