"""Client quotas (KIP-13, KIP-55, KIP-124, KIP-546, KIP-599, KIP-612): the quota entities and
their validation, the broker's table of configured quotas, and the ClientQuotaManager that
turns recorded bytes into a throttle time."""
