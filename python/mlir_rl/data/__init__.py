"""Programs: kernel builders, named suites, seeded datasets, PyTorch models."""
