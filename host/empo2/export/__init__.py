"""A trained policy out of the host: `plain` (a checkpoint as a plain save_pretrained folder) and
`onnx` (a policy as ONNX, for scoring recorded episodes in the extension without a host)."""
