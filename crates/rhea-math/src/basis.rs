//! RNS bases and CRT reconstruction.
