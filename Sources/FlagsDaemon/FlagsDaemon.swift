// FlagsDaemon: filled in as the module grows.
