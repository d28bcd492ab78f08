//! See the module list in `stats`; filled in by its feature.
