"""`kueue-gitops lsp`: validate's findings in an editor, over the Language Server Protocol."""
