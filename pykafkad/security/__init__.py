"""Who a connection is (principal) and what it may do (authorizer)."""
