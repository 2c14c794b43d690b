"""wildtable: real-time card games over WebSocket, arbitrated through a serialized action log."""

__version__ = "0.1.0"
