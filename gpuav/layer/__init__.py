"""The GPU-AV layer: a pure-Python engine and the native front end the Vulkan loader loads.

Engine (this package; plain ints and lists, no FFI types):
  ``settings`` (on/off and options), ``device_setup`` (CreateDevice/DestroyDevice, set index,
  reserve slot), ``output_buffers`` (memory and descriptor manager), ``shader_modules``,
  ``pipeline_layouts``, ``pipelines``, ``command_buffers`` (per-action blocks),
  ``descriptor_sets`` and ``state_buffer`` (the app's descriptor state for the shaders,
  issue 8), ``queue_submit`` (read-back), ``action_reports`` (decode, context, compose, deliver),
  ``reporting`` (messengers, stderr, message log), ``notices`` (the layer's own messages),
  ``calls`` (the ``DeviceCalls`` interface a front end implements), ``state``.

Front end (``native/``): a cffi-embedded shared library exporting the loader interface;
``build`` compiles it into ``~/.cache/gpuav/layer-<key>/`` beside its manifest
(``gpuav layer-path``), ``entry`` binds every C entry point to its ``hooks_*`` function.

Knobs besides the documented options (see ``settings``): ``GPUAV_MESSAGE_LOG`` (JSON lines of
every message, used by ``gpuav run``), ``GPUAV_BLOCKS_PER_CHUNK`` (output blocks per memory
allocation), ``GPUAV_INSTRUMENTER=module:function`` (another instrumentation function) and
``GPUAV_TEST_FAULTS`` (fault injection for tests), ``GPUAV_CACHE_DIR`` (build cache),
``GPUAV_STATE_WORDS`` (capacity of the descriptor-state buffer, in words).
"""
