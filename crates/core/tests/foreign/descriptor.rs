//! Descriptors made by hand, each breaking one rule: refused whole.

use std::ffi::CStr;

use tidepool_core::kernels::foreign::LoadError;
use tidepool_core::kernels::{self, KernelId};
use tidepool_kernel_sdk::abi::{self, TpKernel, TpLibrary};
use tidepool_kernel_sdk::{descriptor, library, Error, Kernel, Values};

use crate::kernels::*;

/// A library descriptor made by hand, to break one rule at a time.
fn library_with(kernels: Vec<TpKernel>, edit: impl FnOnce(&mut TpLibrary)) -> *const TpLibrary {
    let kernels: &'static [TpKernel] = Box::leak(kernels.into_boxed_slice());
    let mut lib = library(kernels);
    edit(&mut lib);
    Box::leak(Box::new(lib))
}

fn load(lib: *const TpLibrary) -> Result<Vec<KernelId>, LoadError> {
    // SAFETY: descriptors made (and leaked) by this test.
    unsafe { kernels::register(lib) }
}

named!(Fresh, c"test/fresh");
named!(Clash, c"test/sum");
named!(Unscoped, c"sha256");
named!(Upper, c"Test/Upper");

#[test]
fn a_library_of_another_version_or_breaking_a_rule_is_refused_whole() {
    ids();
    let abi = |edit: fn(&mut TpLibrary)| load(library_with(vec![descriptor::<Fresh>()], edit));
    assert!(
        matches!(abi(|l| l.abi_version = 2), Err(LoadError::Abi(ref m)) if m.contains("version 2"))
    );
    assert!(matches!(abi(|l| l.size = 8), Err(LoadError::Abi(_))));
    assert!(matches!(abi(|l| l.kernel_size = 16), Err(LoadError::Abi(_))));
    assert!(matches!(abi(|l| l.kernel_count = 0), Err(LoadError::Invalid(_))));
    assert!(matches!(load(std::ptr::null()), Err(LoadError::Invalid(_))));

    // A clash refuses the whole library: "test/fresh" is not registered either.
    assert_eq!(
        load(library_with(vec![descriptor::<Fresh>(), descriptor::<Clash>()], |_| {})),
        Err(LoadError::Exists("test/sum".into()))
    );
    assert_eq!(kernels::find("test/fresh"), None);
    for bad in [descriptor::<Unscoped>(), descriptor::<Upper>()] {
        assert!(
            matches!(load(library_with(vec![bad], |_| {})), Err(LoadError::Invalid(ref m)) if m.contains("scope/name"))
        );
    }
    let mut no_update = descriptor::<Fresh>();
    no_update.update = None;
    assert!(matches!(load(library_with(vec![no_update], |_| {})), Err(LoadError::Invalid(_))));
    let mut bad_spec = descriptor::<Sum>();
    static WRONG: [tidepool_kernel_sdk::abi::TpParamSpec; 1] =
        [tidepool_kernel_sdk::abi::TpParamSpec {
            name: c"scale".as_ptr(),
            kind: 99,
            required: 0,
            int_min: 0,
            int_max: 0,
            num_min: 0.0,
            num_max: 0.0,
        }];
    bad_spec.params = WRONG.as_ptr();
    bad_spec.name = c"test/other".as_ptr();
    assert!(
        matches!(load(library_with(vec![bad_spec], |_| {})), Err(LoadError::Invalid(ref m)) if m.contains("unknown type 99"))
    );
    assert_eq!(abi::ABI_VERSION, 1);

    // The same kernel, valid, registers after all.
    let fresh = load(library_with(vec![descriptor::<Fresh>()], |_| {})).unwrap();
    assert_eq!(kernels::find("test/fresh"), Some(fresh[0]));
}
