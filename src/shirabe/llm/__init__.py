"""Chat models: the interface answer writing and query understanding need, an
OpenAI-compatible client (servers, Azure OpenAI) and in-process llama.cpp."""
