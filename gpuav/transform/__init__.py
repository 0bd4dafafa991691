"""SPIR-V transforms that are not instrumentation: passes that reshape a module's interface.

- ``split_output_structs``: one output variable per leaf member of struct-typed outputs.
"""
