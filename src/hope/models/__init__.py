"""Model access: the OpenAI-compatible chat client, the embedded llama.cpp server, embedders."""
