"""Venus engine: perception, models, timeline and the duplex runtime. No Qt here."""
