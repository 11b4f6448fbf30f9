"""Japanese text handling with no dependency on the rest of shirabe: normalisation,
encodings, sentences, identifiers, terms, synonyms, globs and Markdown escaping."""
