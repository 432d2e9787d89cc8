//! The negacyclic number-theoretic transform.
