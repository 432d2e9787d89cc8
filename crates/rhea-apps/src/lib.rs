//! Whole applications on encrypted data with Rhea — the seeds' workloads, each run end to end on
//! ciphertexts and checked against the same computation in plain `f64`.
//!
//! - [`helr`]: logistic-regression training (Han et al., AAAI 2019; seed 004's HELR), with
//!   bootstrapping in the loop.
//! - [`resnet20`]: ResNet-20 inference of one CIFAR-10-shaped image (Lee et al., ICML 2022;
//!   seed 004's ResNet) with multiplexed convolutions, a minimax ReLU and bootstrapping.
//! - [`rnn`]: inference of a plain RNN (128 units, 200 steps) on encrypted word embeddings
//!   (Podschwadt and Takabi, PrivateNLP 2020; seed 004's RNN), bootstrapping every 3 steps.
//! - [`cnn_mnist`]: seed 003's CNN inference on 28 × 28 images (HE-Booster), in the seed's
//!   layout (one pixel per BGV ciphertext, a batch of images across the slots) and a packed CKKS
//!   layout.
//!
//! Each application has a small size that runs on a CPU in CI (insecure parameters, the same
//! code) and the paper's size for the GPU; `rhea app NAME --device D --size small|paper` runs
//! them from the command line and prints (or writes as JSON) the same report.

pub mod chart;
pub mod cnn_mnist;
pub mod fit;
pub mod helr;
pub mod resnet20;
pub mod rnn;
mod size;

pub use size::Size;
