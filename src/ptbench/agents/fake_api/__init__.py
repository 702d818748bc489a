"""A scripted model API on loopback, so real agent CLIs run offline: the script (`script.py`), the wire formats
(`wire.py`: OpenAI Responses for Codex, Chat Completions in Terminus-2's JSON for Harbor's terminus-2) and the HTTP
server (`server.py`)."""
