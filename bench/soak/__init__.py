"""Soak benchmark: a long scripted conversation through the duplex runtime, watched for leaks (issue #24 item 8)."""
