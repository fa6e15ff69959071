"""A member's question: what it is (`context`), and its way from arrival to bookkeeping (`flow`)."""
