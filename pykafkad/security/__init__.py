"""Who a connection is and what it may do: TLS (SSL, SASL_SSL) and SASL (SASL_PLAINTEXT,
SASL_SSL) authentication as Kafka configures and speaks them, which set each connection's
principal, and the authorizer that reads it."""
