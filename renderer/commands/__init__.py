"""Command bodies: one module per command (or group), each a plain function ``run(request) -> int``.

They, the reporters they hand their results to (``renderer.formats``' registry) and ``renderer.runner``
are the only code that writes to stdout or stderr. The Click skin
(``renderer.cli``) and the start-up fast path (``renderer.entry``) build the requests
(``renderer.requests``) and call these through ``renderer.runner.execute``.
"""
