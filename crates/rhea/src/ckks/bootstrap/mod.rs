//! CKKS bootstrapping (issue 34), being built: ModRaise ([`Evaluator::mod_raise`](crate::ckks::Evaluator::mod_raise)).

mod raise;
