//! One test per promise of the redesigned public API: tied parameters counted and stepped
//! once, strict `load_state_dict`, 0/1-only masks, overflow and allocation checks that name
//! the op at the caller's line, anomaly panics at the caller's line, config-built layers,
//! `grad()` that says why there is no gradient, shape arguments in every form, reductions
//! without a boolean, and `{:.N}` formatting.

use crate::common;

use common::{Raised, panic_at};
use engine::nn::{
    Embedding, EmbeddingConfig, GruCell, GruConfig, Linear, LinearConfig, LoadError,
    Module, StateDict, prefixed,
};
use engine::optim::{Optimizer, Sgd, SgdConfig};
use engine::{NoGrad, Tensor, anomaly, memory};

/// Asserts that the panic was reported at `line` of this file (the caller's line), not at
/// a line inside the engine.
#[track_caller]
fn assert_reported_at(raised: &Raised, line: u32) {
    assert_eq!(
        (raised.file.as_str(), raised.line),
        (file!(), line),
        "panic reported at the wrong place; message: {}",
        raised.message
    );
}

/// Sets this thread's memory budget and removes it again when dropped, even if the test
/// fails in between.
struct BudgetGuard;

impl BudgetGuard {
    fn set(bytes: usize) -> BudgetGuard {
        memory::set_budget(Some(bytes));
        BudgetGuard
    }
}

impl Drop for BudgetGuard {
    fn drop(&mut self) {
        memory::set_budget(None);
    }
}

// ---- tied parameters ----------------------------------------------------------------------

/// A language-model head whose output projection reuses the embedding table.
struct TiedModel {
    emb: Embedding,
    head: Linear,
}

impl Module for TiedModel {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        let mut all = prefixed("emb", &self.emb);
        all.extend(prefixed("head", &self.head));
        all
    }
}

#[test]
fn a_weight_tied_between_embedding_and_linear_is_counted_listed_and_stepped_once() {
    let w = Tensor::ones([3, 2]).requires_grad_();
    let emb = Embedding::from_weights(&w);
    let head = Linear::from_weights(emb.weight(), None);
    assert!(head.weight().same(emb.weight()), "from_weights shares");
    let model = TiedModel { emb, head };

    assert_eq!(model.num_parameters(), 6, "not 12: the table counts once");
    let params = model.parameters();
    assert_eq!(params.len(), 1);
    assert!(params[0].same(&w));
    let named: Vec<String> = model
        .named_parameters()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(named, ["emb.weight"], "the first name is kept");

    // The state lists the table under both names (as PyTorch's state_dict does), as copies.
    let state = model.state_dict();
    assert_eq!(
        state.names().collect::<Vec<_>>(),
        ["emb.weight", "head.weight"]
    );
    for (_, t) in state.iter() {
        assert_eq!(t.shape(), &[3, 2]);
        assert_eq!(t.to_vec(), vec![1.0; 6]);
        assert!(!t.same(&w));
    }

    // One step with gradient 1 and lr 0.1 moves 1.0 to 0.9; a doubly listed table would
    // be stepped twice, to 0.8.
    let mut opt = Sgd::new(
        model.parameters(),
        SgdConfig {
            lr: 0.1,
            ..SgdConfig::default()
        },
    );
    w.set_grad(Some(Tensor::ones([3, 2])));
    opt.step();
    assert_eq!(w.to_vec(), vec![0.9; 6]);
    assert_eq!(model.head.weight().to_vec(), vec![0.9; 6]);
    assert_eq!(
        state.get("emb.weight").unwrap().to_vec(),
        vec![1.0; 6],
        "the state is a copy, untouched by the step"
    );

    // Loading the saved state restores both names, and the tie survives.
    model.load_state_dict(&state).unwrap();
    assert_eq!(w.to_vec(), vec![1.0; 6]);
    assert_eq!(model.emb.weight().to_vec(), vec![1.0; 6]);
    assert_eq!(model.head.weight().to_vec(), vec![1.0; 6]);
    assert!(model.head.weight().same(model.emb.weight()));
}

#[test]
fn an_optimizer_refuses_the_same_tensor_listed_twice_naming_both_positions() {
    let w = Tensor::ones([3, 2]).requires_grad_();
    let line = line!() + 2;
    let raised =
        panic_at(|| drop(Sgd::new(vec![w.clone(), w.clone()], SgdConfig::default())));
    assert!(
        raised.message.starts_with(
            "Sgd::new: parameters 0 and 1 (shape [3, 2]) are the same tensor"
        ),
        "{}",
        raised.message
    );
    assert_reported_at(&raised, line);
}

// ---- load_state_dict ----------------------------------------------------------------------

#[test]
fn load_state_dict_reports_missing_unexpected_and_mismatched_together_and_changes_nothing()
 {
    engine::manual_seed(1);
    let cell = GruCell::new(GruConfig {
        input_size: 2,
        hidden_size: 1,
    });
    let before: Vec<(String, Vec<f32>)> = cell
        .list_parameters()
        .into_iter()
        .map(|(n, t)| (n, t.to_vec()))
        .collect();

    // weight_ih and bias_hh fit and would be loaded if the rest did; weight_hh has the
    // wrong shape, bias_ih is missing, and bias_ih_l0 is no parameter of a cell.
    let state = StateDict::from([
        ("weight_ih", Tensor::full([3, 2], 5.0)),
        ("weight_hh", Tensor::zeros([3, 2])),
        ("bias_hh", Tensor::full([3], 7.0)),
        ("bias_ih_l0", Tensor::zeros([3])),
    ]);
    let err = cell.load_state_dict(&state).unwrap_err();
    assert_eq!(
        err,
        LoadError {
            missing: vec!["bias_ih".to_string()],
            unexpected: vec!["bias_ih_l0".to_string()],
            mismatched: vec![("weight_hh".to_string(), vec![3, 1], vec![3, 2])],
        }
    );
    assert_eq!(
        err.to_string(),
        "load_state_dict: the state does not fit the module\n  weight_hh: expected shape [3, 1], found [3, 2]\n  missing: bias_ih\n  unexpected: bias_ih_l0"
    );

    let after: Vec<(String, Vec<f32>)> = cell
        .list_parameters()
        .into_iter()
        .map(|(n, t)| (n, t.to_vec()))
        .collect();
    assert_eq!(
        after, before,
        "nothing is assigned when the state does not fit"
    );
    assert_ne!(cell.weight_ih().to_vec(), vec![5.0; 6]);
    assert_ne!(cell.bias_hh().to_vec(), vec![7.0; 3]);
}

// ---- masks hold only 0 and 1 --------------------------------------------------------------

#[test]
fn masked_fill_refuses_a_half_and_a_nan_in_the_mask() {
    let x = Tensor::from_vec(vec![1.0, 2.0, 3.0], [3]);

    let half = Tensor::from_vec(vec![0.0, 0.5, 1.0], [3]);
    let line = line!() + 1;
    let raised = panic_at(|| drop(x.masked_fill(&half, -1e9)));
    assert!(
        raised.message.starts_with(
            "masked_fill: the mask must hold only 0 (false) and 1 (true), found 0.5 at position 1"
        ),
        "{}",
        raised.message
    );
    assert_reported_at(&raised, line);

    let nan = Tensor::from_vec(vec![1.0, 0.0, f32::NAN], [3]);
    let line = line!() + 1;
    let raised = panic_at(|| drop(x.masked_fill(&nan, -1e9)));
    assert!(
        raised.message.starts_with(
            "masked_fill: the mask must hold only 0 (false) and 1 (true), found NaN at position 2"
        ),
        "{}",
        raised.message
    );
    assert_reported_at(&raised, line);
}

#[test]
fn where_cond_refuses_a_half_and_a_nan_in_the_condition() {
    let (a, b) = (Tensor::ones([2, 2]), Tensor::zeros([2, 2]));

    let half = Tensor::from_vec(vec![1.0, 0.0, 0.5, 1.0], [2, 2]);
    let line = line!() + 1;
    let raised = panic_at(|| drop(half.where_cond(&a, &b)));
    assert!(
        raised.message.starts_with(
            "where_cond: the condition must hold only 0 (false) and 1 (true), found 0.5 at position 2"
        ),
        "{}",
        raised.message
    );
    assert_reported_at(&raised, line);

    let nan = Tensor::from_vec(vec![f32::NAN, 0.0, 1.0, 1.0], [2, 2]);
    let line = line!() + 1;
    let raised = panic_at(|| drop(nan.where_cond(&a, &b)));
    assert!(
        raised.message.starts_with(
            "where_cond: the condition must hold only 0 (false) and 1 (true), found NaN at position 0"
        ),
        "{}",
        raised.message
    );
    assert_reported_at(&raised, line);

    // 0 and 1 still select as before.
    let cond = Tensor::from_vec(vec![1.0, 0.0, 0.0, 1.0], [2, 2]);
    assert_eq!(cond.where_cond(&a, &b).to_vec(), vec![1.0, 0.0, 0.0, 1.0]);
}

// ---- overflowing sizes --------------------------------------------------------------------

#[test]
fn zeros_of_a_shape_whose_element_count_overflows_names_zeros_and_the_shape() {
    let line = line!() + 1;
    let raised = panic_at(|| drop(Tensor::zeros([1usize << 33, 1 << 33, 4])));
    assert!(
        raised.message.starts_with(
            "zeros: the shape [8589934592, 8589934592, 4] holds more elements than a usize can count"
        ),
        "{}",
        raised.message
    );
    assert_reported_at(&raised, line);
}

#[test]
fn arange_step_with_more_entries_than_memory_can_hold_names_arange_step() {
    let line = line!() + 1;
    let raised = panic_at(|| drop(Tensor::arange_step(0.0, 1e30, 1e-30)));
    assert!(
        raised.message.starts_with("arange_step: "),
        "{}",
        raised.message
    );
    assert!(
        raised
            .message
            .contains("entries, more than any machine can hold"),
        "{}",
        raised.message
    );
    assert_reported_at(&raised, line);
}

#[test]
fn repeat_interleave_by_usize_max_names_the_op_and_the_shape() {
    let x = Tensor::from_vec(vec![1.0, 2.0, 3.0], [3]);
    let line = line!() + 1;
    let raised = panic_at(|| drop(x.repeat_interleave(usize::MAX, 0)));
    assert_eq!(
        raised.message,
        format!(
            "repeat_interleave: 3 entries repeated {} times do not fit in a usize (dimension 0 of [3])",
            usize::MAX
        )
    );
    assert_reported_at(&raised, line);
}

#[test]
fn reshape_to_usize_max_is_a_size_not_minus_one() {
    let x = Tensor::ones([4]);
    let line = line!() + 1;
    let raised = panic_at(|| drop(x.reshape(vec![usize::MAX])));
    assert!(
        raised.message.starts_with(&format!(
            "reshape: cannot reshape [4] (4 elements) into [{m}] ({m} elements)",
            m = usize::MAX
        )),
        "{}",
        raised.message
    );
    assert_reported_at(&raised, line);
}

#[test]
fn reshape_of_an_empty_tensor_to_an_overflowing_shape_is_refused() {
    // 0 elements, and 2³³ · 2³³ · 4 = 2⁶⁸ would wrap around to 0: it must not "fit".
    let empty = Tensor::zeros([0]);
    let line = line!() + 1;
    let raised = panic_at(|| drop(empty.reshape([1usize << 33, 1 << 33, 4])));
    assert!(
        raised.message.starts_with(
            "reshape: the shape [8589934592, 8589934592, 4] holds more elements than a usize can count"
        ),
        "{}",
        raised.message
    );
    assert_reported_at(&raised, line);
}

// ---- allocation ---------------------------------------------------------------------------

#[test]
fn a_result_the_machine_cannot_allocate_is_refused_with_the_op_shape_and_bytes() {
    // 100 GB, as a typo in a size easily asks for. Refused by the allocator on any machine
    // with less memory; a machine that grants it would simply allocate, so this part runs
    // only where the allocator refuses (the same probe the engine makes).
    let n = 25_000_000_000usize;
    if Vec::<f32>::new().try_reserve_exact(n).is_err() {
        let line = line!() + 1;
        let raised = panic_at(|| drop(Tensor::zeros([n])));
        assert_eq!(
            raised.message,
            "zeros: the result [25000000000] needs 93.13 GiB (25000000000 values of 4 bytes), and the machine cannot allocate that much\n  hint: use smaller sizes (batch, sequence length, hidden size)"
        );
        assert_reported_at(&raised, line);
    }

    // 128 TiB: the whole address space of a 64-bit process; no allocator grants it.
    let line = line!() + 1;
    let raised = panic_at(|| drop(Tensor::zeros([1usize << 45])));
    assert!(
        raised.message.starts_with(
            "zeros: the result [35184372088832] needs 128.00 TiB (35184372088832 values of 4 bytes), and the machine cannot allocate that much"
        ),
        "{}",
        raised.message
    );
    assert_reported_at(&raised, line);
}

#[test]
fn zeros_over_the_thread_budget_names_zeros_the_shape_and_both_byte_figures() {
    let guard = BudgetGuard::set(1 << 20);
    assert_eq!(memory::budget(), Some(1 << 20));
    let line = line!() + 1;
    let raised = panic_at(|| drop(Tensor::zeros([1024, 1024])));
    assert!(
        raised.message.starts_with(
            "zeros: the result [1024, 1024] needs 4.00 MiB (1048576 values of 4 bytes), but this thread's memory budget is 1.00 MiB"
        ),
        "{}",
        raised.message
    );
    assert!(
        raised.message.contains(
            "hint: use smaller sizes, or raise the limit with engine::memory::set_budget"
        ),
        "{}",
        raised.message
    );
    assert_reported_at(&raised, line);

    // Within the budget, allocation works as usual.
    assert_eq!(Tensor::zeros([256, 256]).shape(), &[256, 256]);

    drop(guard);
    assert_eq!(memory::budget(), None);
    let big = Tensor::zeros([1024, 1024]);
    assert_eq!(big.shape(), &[1024, 1024]);
    assert_eq!(big.sum().item(), 0.0);
}

#[test]
fn a_broadcast_add_over_the_budget_names_add_and_the_broadcast_shape() {
    let q = Tensor::ones([2, 8, 1, 64]);
    let k = Tensor::ones([2, 1, 512, 64]);
    {
        let _guard = BudgetGuard::set(1 << 20);
        let line = line!() + 1;
        let raised = panic_at(|| drop(&q + &k));
        assert!(
            raised.message.starts_with(
                "add: the result [2, 8, 512, 64] needs 2.00 MiB (524288 values of 4 bytes)"
            ),
            "{}",
            raised.message
        );
        assert!(
            raised
                .message
                .contains("this thread's memory budget is 1.00 MiB"),
            "{}",
            raised.message
        );
        assert_reported_at(&raised, line);
    }
    assert_eq!(memory::budget(), None);
    let sum = &q + &k;
    assert_eq!(sum.shape(), &[2, 8, 512, 64]);
    assert_eq!(sum.to_vec()[..3], [2.0, 2.0, 2.0]);
}

#[test]
fn the_budget_is_per_thread() {
    let _guard = BudgetGuard::set(1 << 10);
    let other =
        std::thread::spawn(|| (memory::budget(), Tensor::zeros([1024]).numel()))
            .join()
            .unwrap();
    assert_eq!(other, (None, 1024));
}

// ---- anomaly mode points at the caller's line ---------------------------------------------

#[test]
fn anomaly_forward_panic_points_at_the_callers_line() {
    let x = Tensor::from_vec(vec![1.0, 0.0], [2]);
    let line = line!() + 1;
    let raised = panic_at(|| anomaly::detect_anomaly(|| drop(x.log())));
    assert!(
        raised.message.starts_with(
            "anomaly: the forward pass of `log` produced -inf at element 1"
        ),
        "{}",
        raised.message
    );
    assert_reported_at(&raised, line);
}

#[test]
fn anomaly_backward_panic_points_at_the_callers_line() {
    // sqrt(0) = 0 going forward; its derivative 1 / (2 sqrt(0)) is infinite.
    let x = Tensor::from_vec(vec![4.0, 0.0], [2]).requires_grad_();
    let loss = x.sqrt().sum();
    let line = line!() + 1;
    let raised = panic_at(|| anomaly::detect_anomaly(|| loss.backward()));
    assert!(
        raised.message.starts_with(
            "anomaly: the backward pass of `sqrt` produced inf at element 1"
        ),
        "{}",
        raised.message
    );
    assert_reported_at(&raised, line);
}

// ---- configs: zero sizes name the module and the setting ----------------------------------

#[test]
fn a_zero_size_names_the_module_and_the_setting() {
    let linear = LinearConfig {
        in_features: 20,
        out_features: 0,
        ..Default::default()
    };
    let line = line!() + 1;
    let raised = panic_at(|| drop(Linear::new(linear)));
    assert_eq!(
        raised.message,
        "Linear::new: out_features must be at least 1, found 0 (sizes have no default: set it in the config)"
    );
    assert_reported_at(&raised, line);

    let embedding = EmbeddingConfig {
        num_embeddings: 100,
        ..Default::default()
    };
    let line = line!() + 1;
    let raised = panic_at(|| drop(Embedding::new(embedding)));
    assert_eq!(
        raised.message,
        "Embedding::new: embedding_dim must be at least 1, found 0 (sizes have no default: set it in the config)"
    );
    assert_reported_at(&raised, line);

    let gru = GruConfig {
        input_size: 8,
        ..Default::default()
    };
    let line = line!() + 1;
    let raised = panic_at(|| drop(GruCell::new(gru)));
    assert_eq!(
        raised.message,
        "GruCell::new: hidden_size must be at least 1, found 0 (sizes have no default: set it in the config)"
    );
    assert_reported_at(&raised, line);
}

// ---- grad() says why there is no gradient -------------------------------------------------

#[test]
fn grad_of_an_intermediate_result_is_not_a_leaf_and_retain_grad_keeps_it() {
    let x = Tensor::from_vec(vec![1.0, -2.0, 0.5], [3]).requires_grad_();
    let h = &x * 3.0;
    h.sum().backward();
    let err = h.grad().unwrap_err();
    assert_eq!(err, NoGrad::NotALeaf);
    assert!(err.to_string().contains("retain_grad"), "{err}");
    assert!(format!("{err:?}").starts_with("NotALeaf ("), "{err:?}");
    assert_eq!(x.grad().unwrap().to_vec(), vec![3.0, 3.0, 3.0]);

    // With retain_grad before backward: d(Σ h²)/dh = 2h, and dx = 3 · 2h.
    let x = Tensor::from_vec(vec![1.0, -2.0, 0.5], [3]).requires_grad_();
    let h = &x * 3.0;
    h.retain_grad();
    h.square().sum().backward();
    assert_eq!(h.grad().unwrap().to_vec(), vec![6.0, -12.0, 3.0]);
    assert_eq!(x.grad().unwrap().to_vec(), vec![18.0, -36.0, 9.0]);
}

#[test]
fn grad_says_not_tracked_and_not_yet_computed() {
    let constant = Tensor::from_vec(vec![1.0, 2.0], [2]);
    assert_eq!(constant.grad().unwrap_err(), NoGrad::NotTracked);
    assert!(
        constant
            .grad()
            .unwrap_err()
            .to_string()
            .contains("requires_grad_()")
    );

    let leaf = Tensor::from_vec(vec![1.0, 2.0], [2]).requires_grad_();
    assert_eq!(leaf.grad().unwrap_err(), NoGrad::NotYetComputed);
    assert!(
        leaf.grad()
            .unwrap_err()
            .to_string()
            .contains("call backward()")
    );
    // A retained intermediate before backward has no gradient yet either.
    let h = &leaf * 2.0;
    h.retain_grad();
    assert_eq!(h.grad().unwrap_err(), NoGrad::NotYetComputed);
}

#[test]
fn retain_grad_on_an_untracked_tensor_panics_with_a_hint() {
    let constant = Tensor::from_vec(vec![1.0, 2.0], [2]);
    let line = line!() + 1;
    let raised = panic_at(|| constant.retain_grad());
    assert!(
        raised
            .message
            .starts_with("retain_grad: this tensor does not require a gradient"),
        "{}",
        raised.message
    );
    assert!(
        raised.message.contains("requires_grad_()"),
        "{}",
        raised.message
    );
    assert_reported_at(&raised, line);
}

// ---- shape arguments in every form --------------------------------------------------------

#[test]
fn shape_arguments_accept_arrays_tuples_slices_and_vecs() {
    let (b, t, h) = (2usize, 3usize, 4usize);

    // An array of literals.
    let x = Tensor::arange(24).reshape([2, 3, 4]);
    assert_eq!(x.shape(), &[2, 3, 4]);
    // An array of usize variables.
    assert_eq!(Tensor::zeros([b, t, h]).shape(), &[2, 3, 4]);
    // A tuple mixing usize and -1.
    let y = x.reshape((b, t, -1));
    assert_eq!(y.shape(), &[2, 3, 4]);
    assert_eq!(x.reshape((b, -1)).shape(), &[2, 12]);
    assert_eq!(x.reshape((b, t, 2, -1)).shape(), &[2, 3, 2, 2]);
    // A slice from shape().
    assert_eq!(Tensor::zeros(y.shape()).shape(), &[2, 3, 4]);
    assert_eq!(Tensor::arange(24).reshape(x.shape()).to_vec(), x.to_vec());
    // A Vec<usize>.
    let row = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], [1, 4]);
    let grown = row.expand(vec![b, h]);
    assert_eq!(grown.shape(), &[2, 4]);
    assert_eq!(grown.to_vec(), vec![1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0]);
    assert_eq!(row.expand((t, -1)).shape(), &[3, 4]);
    // A &Vec<i64>.
    let order: Vec<i64> = vec![2, 0, 1];
    let p = x.permute(&order);
    assert_eq!(p.shape(), &[4, 2, 3]);
    assert_eq!(p.to_vec()[..4], [0.0, 4.0, 8.0, 12.0]);
    let dims: Vec<i64> = vec![0, -1];
    let s = x.sum_dims(&dims);
    assert_eq!(s.shape(), &[3]);
    // Σ over b and h of 12b + 4t + h: 2·4·4t + (0 + 12)·4 + 2·(0+1+2+3) = 32t + 60.
    assert_eq!(s.to_vec(), vec![60.0, 92.0, 124.0]);
    assert_eq!(x.sum_dims_keepdim(&dims).shape(), &[1, 3, 1]);
    // An empty tuple is a scalar's shape.
    assert_eq!(Tensor::zeros(()).shape(), &[] as &[usize]);
}

#[test]
fn a_negative_size_outside_reshape_and_expand_is_refused_with_a_hint() {
    let line = line!() + 1;
    let raised = panic_at(|| drop(Tensor::zeros(vec![2i64, -1])));
    assert_eq!(
        raised.message,
        "zeros: size -1 at position 1 of the shape [2, -1] is not a size (a whole number ≥ 0); hint: -1 (\"infer this size\") means something only to reshape and expand"
    );
    assert_reported_at(&raised, line);
}

// ---- reductions: a method per keepdim -----------------------------------------------------

#[test]
fn reductions_drop_the_dimension_and_keepdim_variants_keep_it_as_one() {
    let x = Tensor::from_vec(vec![1.0, 5.0, 3.0, 4.0, 2.0, 6.0], [2, 3]);

    let s = x.sum_dim(-1);
    assert_eq!((s.shape(), s.to_vec()), (&[2usize][..], vec![9.0, 12.0]));
    let s = x.sum_dim_keepdim(-1);
    assert_eq!((s.shape(), s.to_vec()), (&[2usize, 1][..], vec![9.0, 12.0]));
    let s = x.sum_dim(0);
    assert_eq!(
        (s.shape(), s.to_vec()),
        (&[3usize][..], vec![5.0, 7.0, 9.0])
    );

    let m = x.mean_dim(-1);
    assert_eq!((m.shape(), m.to_vec()), (&[2usize][..], vec![3.0, 4.0]));
    let m = x.mean_dim_keepdim(-1);
    assert_eq!((m.shape(), m.to_vec()), (&[2usize, 1][..], vec![3.0, 4.0]));

    let m = x.max_dim(-1);
    assert_eq!((m.shape(), m.to_vec()), (&[2usize][..], vec![5.0, 6.0]));
    let m = x.max_dim_keepdim(-1);
    assert_eq!((m.shape(), m.to_vec()), (&[2usize, 1][..], vec![5.0, 6.0]));
    let m = x.max_dim_keepdim(0);
    assert_eq!(
        (m.shape(), m.to_vec()),
        (&[1usize, 3][..], vec![4.0, 5.0, 6.0])
    );

    // The kept dimension broadcasts back against the input: each row divided by its sum.
    let shares = &x / &x.sum_dim_keepdim(-1);
    assert_eq!(shares.sum_dim(-1).to_vec(), vec![1.0, 1.0]);
}

// ---- Display honours the precision --------------------------------------------------------

#[test]
fn display_precision_sets_the_number_of_decimals() {
    let t = Tensor::from_vec(vec![1.0, -2.5, 3.4567], [3]);
    assert_eq!(
        format!("{t:.2}"),
        "tensor([ 1.00, -2.50,  3.46], shape=[3])"
    );
    assert_eq!(
        format!("{t}"),
        "tensor([ 1.0000, -2.5000,  3.4567], shape=[3])"
    );
    assert_eq!(
        format!("{:.1}", Tensor::from_vec(vec![1.25, 1e-6], [2])),
        "tensor([    1.2, 1.0e-06], shape=[2])"
    );
}

#[test]
fn sums_over_an_empty_dimension_are_zeros_whichever_dimension_it_is() {
    assert_eq!(Tensor::zeros([3, 0]).sum_dim(-1).to_vec(), vec![0.0; 3]);
    assert_eq!(Tensor::zeros([3, 0, 2]).sum_dim(1).to_vec(), vec![0.0; 6]);
    assert_eq!(Tensor::zeros([0, 4]).sum_dim(-1).shape(), &[0]);
}

// ---- optimizers refuse what they could never move ------------------------------------------

#[test]
fn an_optimizer_refuses_a_tensor_without_gradient_or_an_empty_list_at_the_callers_line()
 {
    let params = vec![Tensor::ones([3, 2]).requires_grad_(), Tensor::zeros([2])];
    let line = line!() + 1;
    let raised = panic_at(|| drop(Sgd::new(params, SgdConfig::default())));
    assert_eq!(
        raised.message,
        "Sgd::new: parameter 1 (shape [2]) does not require a gradient, so backward never gives it one and no step would move it; hint: create it with requires_grad_() or nn::parameter, or leave it out of the list"
    );
    assert_reported_at(&raised, line);

    let line = line!() + 2;
    let raised =
        panic_at(|| drop(engine::optim::Adam::new(vec![], Default::default())));
    assert!(
        raised
            .message
            .starts_with("Adam::new: the parameter list is empty"),
        "{}",
        raised.message
    );
    assert_reported_at(&raised, line);
}

// ---- a parameter updated by hand gets the no_grad hint, not only retain_grad -------------

/// The hint every message gives for a parameter updated by hand while recording.
const HAND_UPDATE_HINT: &str = "if it is a parameter updated by hand outside no_grad (w = &w - …), that update was recorded as an op and its result is no longer a leaf: write the new values into the parameter under no_grad instead, engine::no_grad(|| w.assign(&new_w)), or use an optimizer from engine::optim";

#[test]
fn a_parameter_updated_by_hand_outside_no_grad_is_told_to_use_no_grad_or_an_optimizer()
 {
    let lr = 0.25;
    let w = Tensor::from_vec(vec![1.0, -2.0], [2]).requires_grad_();
    (&w * &w).sum().backward();
    // PyTorch's `w = w - lr * w.grad` without torch.no_grad(): the update is recorded.
    let w = &w - &(&w.grad().unwrap() * lr);
    assert_eq!(w.to_vec(), vec![0.5, -1.0]);
    (&w * &w).sum().backward();
    let err = w.grad().unwrap_err();
    assert_eq!(err, NoGrad::NotALeaf);
    assert_eq!(
        err.to_string(),
        format!(
            "no gradient: this tensor is the result of an op, whose gradient backward uses and drops. hint: if it is an intermediate result, call .retain_grad() on it before backward(), as in PyTorch; {HAND_UPDATE_HINT}"
        )
    );

    // Marking the result, or assigning to it, says the same.
    let line = line!() + 1;
    let raised = panic_at(|| drop(w.clone().requires_grad_()));
    assert_eq!(
        raised.message,
        format!(
            "requires_grad_: only a leaf tensor can be marked; this one is the result of an op. hint: call .detach() first to start a new leaf from its values (.detach().requires_grad_()); {HAND_UPDATE_HINT}"
        )
    );
    assert_reported_at(&raised, line);
    let line = line!() + 1;
    let raised = panic_at(|| w.assign(&Tensor::zeros([2])));
    assert_eq!(
        raised.message,
        format!(
            "assign: only a leaf tensor (a parameter) can be assigned to; this one is the result of an op. hint: {HAND_UPDATE_HINT}"
        )
    );
    assert_reported_at(&raised, line);

    // The update the hint gives keeps the parameter a leaf with a gradient: w = 0.5 · w
    // after the step, and d(Σ w²)/dw = 2w.
    let w = Tensor::from_vec(vec![1.0, -2.0], [2]).requires_grad_();
    (&w * &w).sum().backward();
    engine::no_grad(|| w.assign(&(&w - &(&w.grad().unwrap() * lr))));
    w.zero_grad();
    (&w * &w).sum().backward();
    assert!(w.is_leaf());
    assert_eq!(w.to_vec(), vec![0.5, -1.0]);
    assert_eq!(w.grad().unwrap().to_vec(), vec![1.0, -2.0]);
}
