//! The quick start: a one-sentence summary that must mention Alice, five samples, 80% must pass.
