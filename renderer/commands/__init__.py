"""Command bodies: one module per command (or group), each a plain function ``run(request) -> int``.

They are the only code besides ``renderer.runner`` that writes to stdout or stderr. The Click skin
(``renderer.cli``) and the start-up fast path (``renderer.entry``) build the requests
(``renderer.requests``) and call these through ``renderer.runner.execute``.
"""
