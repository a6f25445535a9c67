// PushwooshAPI: filled in as the module grows.
