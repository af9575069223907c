"""``cozy-render doctor``: after the sync, does the GPU route work?

From the render, doctor knows each cluster's GPU route (``renderer.doctor.route``); it reads the live
state through diff's client (``renderer.doctor.live``), runs one unit per documented failure
(``renderer.doctor.checks``, codes in ``renderer.doctor.codes``) and reports per cluster and node
(``renderer.doctor.report``). The command body is ``renderer.commands.doctor``. Nothing here is
imported by ``render``; the ``kubernetes`` client comes with the ``[live]`` extra.
"""
