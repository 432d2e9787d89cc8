//! CKKS bootstrapping (issue 34), being built: ModRaise
//! ([`Evaluator::mod_raise`](crate::ckks::Evaluator::mod_raise)) and sparse-secret
//! encapsulation ([`EncapsulationKeys`], [`Evaluator::encapsulate`](crate::ckks::Evaluator::encapsulate),
//! [`Evaluator::decapsulate`](crate::ckks::Evaluator::decapsulate)).

mod encapsulation;
mod raise;

pub use encapsulation::EncapsulationKeys;
