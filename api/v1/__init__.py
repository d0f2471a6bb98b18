"""/api/v1/: everything a person does on the notebook pages, for programs (docs/api.md)."""
