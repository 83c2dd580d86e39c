"""REST API (``/api/v1/``) for tournaments: thin DRF viewsets over the models and services."""
