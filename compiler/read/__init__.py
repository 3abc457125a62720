"""Zone files read by dnspython: those the core's fast reader leaves, their records handed
to the core in wire form."""
