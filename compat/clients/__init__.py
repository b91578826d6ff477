"""One module per stock client; each exposes ``unavailable()`` and ``run(bootstrap, scenarios)``."""
