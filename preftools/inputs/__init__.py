"""The input side: the Hub download, the Hub's file rule, the raw type contract and the registries."""
