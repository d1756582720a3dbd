"""Report model and renderers (JSON, text, HTML, Markdown): they format, never compute."""
