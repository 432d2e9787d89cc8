//! Unit tests of the base-conversion module.

use super::*;

#[test]
fn register_input_groups_fill_the_device_with_few_groups() {
    // N = 2^16, C = 2: 256 coefficient blocks; an H100 has 132 multiprocessors.
    let rin = BconvTile::RinC2;
    // A ModUp's three digits in one launch: one group each (768 blocks fill 4 per SM).
    assert_eq!(rin.columns_per_block(23, 3 * 256, 132), 23);
    assert_eq!(rin.columns_per_block(25, 3 * 256, 132), 25);
    // A two-polynomial ModDown: two groups; one polynomial: three.
    assert_eq!(rin.columns_per_block(25, 2 * 256, 132), 13);
    assert_eq!(rin.columns_per_block(23, 256, 132), 8);
    // Never more groups than outputs, never an empty plan's division by zero.
    assert_eq!(rin.columns_per_block(3, 8, 132), 1);
    assert_eq!(rin.columns_per_block(0, 0, 132), 1);
    // Many blocks: as few groups of at most RIN_MAX_GROUP as the outputs need.
    assert_eq!(rin.columns_per_block(40, 1 << 14, 132), 20);
    // The register-tiled tiles keep their J.
    assert_eq!(BconvTile::J7C2.columns_per_block(25, 256, 132), 7);
}

#[test]
fn the_two_part_bound_is_the_kernels() {
    // fp64::two_part_high, tested at TWO_PART_MAX_LOG2, is the twin of bconv_f64acc_high,
    // which the kernel takes up to BCONV_F64ACC_MAX_LOG2: the two bounds must be one.
    let define = format!(
        "#define BCONV_F64ACC_MAX_LOG2 {}",
        crate::fp64::TWO_PART_MAX_LOG2
    );
    assert!(BCONV.source.contains(&define), "bconv.cu lacks `{define}`");
}

#[test]
fn the_tile_computes_few_empty_columns() {
    let (n, sms) = (1 << 16, 132);
    // ModUp of a 9-limb digit to 23 limbs: 8 + 8 + 7 with the widest tile.
    assert_eq!(BconvTile::choose(n, 1, 23, sms), BconvTile::J8C2);
    // ModDown to 25 limbs: four groups of 7, not 8 + 8 + 8 + 1.
    assert_eq!(BconvTile::choose(n, 2, 25, sms), BconvTile::J7C2);
    assert_eq!(BconvTile::choose(n, 2, 9, sms), BconvTile::J5C2);
    assert_eq!(BconvTile::choose(n, 1, 16, sms), BconvTile::J8C2);
    assert_eq!(BconvTile::choose(n, 1, 7, sms), BconvTile::J7C2);
    assert_eq!(BconvTile::choose(n, 1, 30, sms), BconvTile::J8C2);
    assert_eq!(BconvTile::choose(n, 1, 17, sms), BconvTile::J6C2);
    // Small problems keep the narrow tiles that fill the device.
    assert_eq!(BconvTile::choose(1 << 12, 1, 2, sms), BconvTile::J4C1);
    for tile in BconvTile::ALL {
        let (j, c) = tile.shape().unwrap();
        assert!(j as usize <= MAX_PLAN && c <= 2, "{tile:?}");
        let instances = if tile.is_rin() {
            vec![
                format!("BCONV_RIN_INSTANCE({c}, BCONV_RIN_LMAX, )"),
                format!("BCONV_RIN_INSTANCE({c}, BCONV_RIN_LMAX_WIDE, _l16)"),
            ]
        } else {
            vec![format!("BCONV_INSTANCE({j}, {c})")]
        };
        for instance in instances {
            assert!(BCONV.source.contains(&instance), "{tile:?}: {instance}");
        }
    }
}

/// Every kernel name the launch code can request (each tile, narrow or not, the usual and the
/// `_l16` register-input kernels, the multi-conversion kernels) is compiled from `bconv.cu`:
/// only the centred conversions are instantiated, so a name built with a removed suffix would
/// fail here instead of at the first launch.
#[test]
#[ignore = "needs NVRTC (run with --include-ignored and libnvrtc on LD_LIBRARY_PATH)"]
fn every_requested_kernel_is_compiled() {
    let image = crate::registry::compile(&BCONV, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    let compiled = crate::registry::cubin_kernel_names(&image).unwrap_or_else(|e| panic!("{e}"));
    let mut requested = Vec::new();
    for tile in BconvTile::ALL {
        for narrow in [false, true] {
            for inputs in [1, RIN_MAX_INPUTS - 4, RIN_MAX_INPUTS, MAX_FROM_LIMBS] {
                requested.push(tile.kernel(narrow, inputs));
                requested.extend(tile.multi_kernel(narrow, inputs));
            }
        }
    }
    requested.sort();
    requested.dedup();
    for name in &requested {
        assert!(name.contains("_centered"), "{name}: not a centred kernel");
        assert!(
            compiled.contains(name),
            "{name} is requested but not compiled"
        );
    }
    // Every compiled conversion kernel is one the launch code can request (the rescale aside).
    for name in &compiled {
        assert!(
            requested.contains(name) || name == "bconv_rescale_last",
            "{name} is compiled but never requested"
        );
    }
}
