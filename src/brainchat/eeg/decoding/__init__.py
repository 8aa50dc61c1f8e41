"""The decoders (PyTorch networks, CSP+LDA), their training and evaluation, and ICA."""
