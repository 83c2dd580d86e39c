"""What Celery needs to know about the broker kind: one place for the settings and the tests."""

AMQP_SCHEMES = ("amqp://", "amqps://", "pyamqp://")


def is_amqp(url: str) -> bool:
    return url.startswith(AMQP_SCHEMES)


def amqp_options() -> dict[str, object]:
    """Celery settings (without the ``CELERY_`` prefix, lower case) for RabbitMQ.

    Durable quorum queues (replicated, on disk, with a delivery count), publisher confirms (a
    publish returns once the broker has the message) and late acknowledgement from the settings:
    a message a dead worker held comes back as soon as its connection drops, with no visibility
    timeout. Countdowns (retries, the debounced rating task) use RabbitMQ's native delayed
    delivery, which needs topic exchanges.
    """
    return {
        "task_default_queue_type": "quorum",
        "task_default_exchange_type": "topic",
        "broker_native_delayed_delivery_queue_type": "quorum",
        "worker_detect_quorum_queues": True,
        "broker_transport_options": {"confirm_publish": True, "connect_timeout": 5},
    }
