#!/usr/bin/python3
"""PyTorch 1.13's lr (and momentum) sequences for tests/nn/lr_scheduler_cycles_test.cpp.

Every case runs one scheduler over an optimizer with two parameter groups (lr 0.1 and 0.03, as
tests/nn/lr_scheduler_more_test.cpp) and records, after construction and after each step, each
group's lr and, where the scheduler cycles it, each group's momentum (SGD's momentum, Adam's
betas[0]). The values are written with repr(), the shortest text that reads back as the same
double, into C++ headers, one table per case, with the Python call that made it above it:
OneCycleLR and CyclicLR into lr_scheduler_cycles_torch.h, the others (ConstantLR, PolynomialLR,
CosineAnnealingWarmRestarts, SequentialLR) into lr_scheduler_restarts_torch.h.

Usage: /usr/bin/python3 tests/data/lr_scheduler_cycles.py tests/nn
Needs Debian's python3-torch (1.13).
"""
import math
import os
import sys
import warnings

import torch
from torch.optim import lr_scheduler as S  # noqa: F401 (the cases' text uses S.)


def optimizer(kind):
    p, q = torch.nn.Parameter(torch.ones(1)), torch.nn.Parameter(torch.ones(1))
    groups = [{'params': [p]}, {'params': [q], 'lr': 0.03}]
    if kind == 'sgd':  # lr only
        return torch.optim.SGD(groups, lr=0.1)
    if kind == 'sgd_momentum':
        return torch.optim.SGD(groups, lr=0.1, momentum=0.9)
    if kind == 'adam':
        return torch.optim.Adam(groups, lr=0.1)
    raise ValueError(kind)


def momentum(group):
    return group['betas'][0] if 'betas' in group else group['momentum']


def row(o, with_momentum):
    r = [g['lr'] for g in o.param_groups]
    if with_momentum:
        r += [momentum(g) for g in o.param_groups]
    return r


# (C++ name, optimizer, the scheduler as Python text over the optimizer `o`, steps after
# construction (None: step(); a number: step(epoch)), record momentum?, one more step() raises?)
CASES = [
    ('constant_lr', 'sgd', 'S.ConstantLR(o, factor=0.5, total_iters=4)', 12, False, False),
    ('constant_lr_defaults', 'sgd', 'S.ConstantLR(o)', 8, False, False),
    # lr * (1.0 / factor) at total_iters, one ulp above lr / factor here.
    ('constant_lr_factor_045', 'sgd', 'S.ConstantLR(o, factor=0.45, total_iters=3)', 6, False, False),
    ('polynomial_lr_power2', 'sgd', 'S.PolynomialLR(o, total_iters=8, power=2.0)', 12, False, False),
    ('polynomial_lr_power_half', 'sgd', 'S.PolynomialLR(o, total_iters=6, power=0.5)', 9, False, False),
    ('warm_restarts_mult2', 'sgd', 'S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001)', 24, False,
     False),
    ('warm_restarts_mult1', 'sgd', 'S.CosineAnnealingWarmRestarts(o, T_0=4)', 13, False, False),
    # step(epoch) with fractional epochs (three steps per epoch), then plain steps after it.
    ('warm_restarts_fractional_mult2', 'sgd', 'S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.002)',
     [e + i / 3 for e in range(9) for i in range(3)] + [None, None, None, 9.5, None], False, False),
    ('warm_restarts_fractional_mult1', 'sgd', 'S.CosineAnnealingWarmRestarts(o, T_0=3)',
     [e + i / 4 for e in range(7) for i in range(4)] + [None, None], False, False),
    # The epochs where int(math.log(...)) rounds down at a restart (log(1000) / log(10) < 3).
    ('warm_restarts_log_rounding', 'sgd', 'S.CosineAnnealingWarmRestarts(o, T_0=1, T_mult=10)',
     [1.0, 10.0, 11.0, 110.0, 111.0, 111.5, None, 1110.0, 1111.0, None], False, False),
    ('sequential_constant_exponential_step', 'sgd',
     'S.SequentialLR(o, [S.ConstantLR(o, factor=0.1, total_iters=2), S.ExponentialLR(o, gamma=0.9), '
     'S.StepLR(o, step_size=2, gamma=0.5)], milestones=[2, 6])', 12, False, False),
    ('sequential_linear_cosine', 'sgd',
     'S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=3), S.CosineAnnealingLR(o, T_max=6, '
     'eta_min=0.001)], milestones=[3])', 14, False, False),
    ('sequential_warm_restarts_lambda', 'sgd',
     'S.SequentialLR(o, [S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2), S.MultiStepLR(o, milestones=[1, 3], '
     'gamma=0.5), S.LambdaLR(o, lambda e: 1 / (1 + e))], milestones=[5, 9])', 14, False, False),
    ('sequential_linear_cyclic', 'sgd_momentum',
     'S.SequentialLR(o, [S.LinearLR(o, start_factor=0.5, total_iters=2), S.CyclicLR(o, base_lr=[0.01, 0.002], '
     'max_lr=[0.1, 0.03], step_size_up=2, step_size_down=3)], milestones=[3])', 14, True, False),
    ('one_cycle_cos_sgd', 'sgd_momentum', 'S.OneCycleLR(o, max_lr=[1.0, 0.3], total_steps=20, pct_start=0.25)', 20,
     True, True),
    ('one_cycle_linear_three_phase_adam', 'adam',
     "S.OneCycleLR(o, max_lr=0.5, total_steps=20, pct_start=0.3, anneal_strategy='linear', three_phase=True, "
     "base_momentum=[0.8, 0.85], max_momentum=[0.9, 0.95], div_factor=10.0, final_div_factor=100.0)", 20, True, True),
    ('one_cycle_cos_three_phase_epochs', 'sgd',
     "S.OneCycleLR(o, max_lr=[0.2, 0.1], epochs=4, steps_per_epoch=5, pct_start=0.4, three_phase=True, "
     "cycle_momentum=False)", 20, False, True),
    ('one_cycle_linear_no_warmup', 'sgd_momentum',
     "S.OneCycleLR(o, max_lr=0.4, total_steps=10, pct_start=0.0, anneal_strategy='linear')", 10, True, True),
    ('cyclic_triangular', 'sgd_momentum',
     'S.CyclicLR(o, base_lr=[0.01, 0.002], max_lr=[0.1, 0.03], step_size_up=3, step_size_down=5)', 26, True, False),
    ('cyclic_triangular2', 'sgd_momentum',
     "S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode='triangular2', base_momentum=[0.7, 0.8], "
     "max_momentum=[0.9, 0.95])", 18, True, False),
    ('cyclic_exp_range', 'sgd_momentum',
     "S.CyclicLR(o, base_lr=[0.01, 0.002], max_lr=[0.1, 0.03], step_size_up=4, step_size_down=2, mode='exp_range', "
     "gamma=0.9)", 20, True, False),
    ('cyclic_no_momentum_adam', 'adam',
     "S.CyclicLR(o, base_lr=0.001, max_lr=0.006, step_size_up=3, mode='triangular2', cycle_momentum=False)", 14, True,
     False),
    ('cyclic_scale_fn_cycle', 'sgd_momentum',
     "S.CyclicLR(o, base_lr=[0.01, 0.002], max_lr=[0.1, 0.03], step_size_up=2, step_size_down=3, "
     "scale_fn=lambda x: 1 / (1 + x), scale_mode='cycle')", 16, True, False),
    ('cyclic_scale_fn_iterations', 'sgd_momentum',
     "S.CyclicLR(o, base_lr=[0.01, 0.002], max_lr=[0.1, 0.03], step_size_up=2, step_size_down=3, "
     "scale_fn=lambda x: 0.95 ** x, scale_mode='iterations')", 16, True, False),
]


def run(kind, text, steps, with_momentum, raises_after):
    o = optimizer(kind)
    s = eval(text, {'S': S, 'o': o})
    rows = [row(o, with_momentum)]
    args = [None] * steps if isinstance(steps, int) else steps
    for a in args:
        if a is None:
            s.step()
        else:
            s.step(a)
        rows.append(row(o, with_momentum))
    if raises_after:
        try:
            s.step()
        except ValueError:
            pass
        else:
            raise AssertionError(text + ': expected the step past total_steps to raise')
    return args, rows


def cpp_double(x):
    t = repr(float(x))
    assert math.isfinite(x), t
    return t


def header(cases):
    out = [
        '#pragma once',
        '// Generated by tests/data/lr_scheduler_cycles.py with PyTorch ' + torch.__version__ + '; do not edit.',
        '// Each table holds, after construction and after each step, the lr of each group and (in the tables',
        '// with momentum) then the momentum of each group (SGD\'s momentum, Adam\'s betas[0]). The optimizers:',
        '//   sgd:          torch.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.03}], lr=0.1)',
        '//   sgd_momentum: the same with momentum=0.9',
        '//   adam:         torch.optim.Adam([{"params": [p]}, {"params": [q], "lr": 0.03}], lr=0.1)',
        '// `S` is torch.optim.lr_scheduler. A table whose steps list epochs was stepped with step(epoch)',
        '// (NaN in the list: a plain step()).',
        '#include <limits>',
        '#include <vector>',
        '',
        '// One row a line, as generated:',
        '// clang-format off',
        'namespace wick::optim::testing::torch113 {',
        '',
    ]
    for name, kind, text, steps, with_momentum, raises_after in cases:
        args, rows = run(kind, text, steps, with_momentum, raises_after)
        out.append('// ' + kind + ': ' + text)
        if raises_after:
            out.append('// (one more step() raises ValueError: past total_steps)')
        if not isinstance(steps, int):
            items = ['std::numeric_limits<double>::quiet_NaN()' if a is None else cpp_double(a) for a in args]
            out.append('inline const std::vector<double> ' + name + '_epochs = {' + ', '.join(items) + '};')
        out.append('inline const std::vector<std::vector<double>> ' + name + ' = {')
        for r in rows:
            out.append('    {' + ', '.join(cpp_double(x) for x in r) + '},')
        out.append('};')
        out.append('')
    out.append('}  // namespace wick::optim::testing::torch113')
    out.append('// clang-format on')
    return '\n'.join(out) + '\n'


def main():
    warnings.simplefilter('ignore')  # the deprecation warning of step(epoch)
    folder = sys.argv[1] if len(sys.argv) > 1 else '.'
    cycling = lambda case: case[0].startswith(('one_cycle', 'cyclic'))
    for file, cases in [('lr_scheduler_cycles_torch.h', [c for c in CASES if cycling(c)]),
                        ('lr_scheduler_restarts_torch.h', [c for c in CASES if not cycling(c)])]:
        with open(os.path.join(folder, file), 'w') as f:
            f.write(header(cases))


if __name__ == '__main__':
    main()
