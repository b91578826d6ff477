"""Authentication for listeners: TLS (SSL, SASL_SSL) and SASL (SASL_PLAINTEXT, SASL_SSL), as
Kafka configures and speaks them.  The authorizer lives elsewhere; it reads the principal set
here on each connection."""
