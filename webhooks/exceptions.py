class WebhookURLError(Exception):
    """A webhook URL the site refuses to call (wrong scheme, private address, unresolvable)."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message
