#!/usr/bin/python3
"""PyTorch 1.13's trajectories for tests/nn/optim_third_test.cpp: Adadelta, ASGD and LBFGS, and
the lrs of MultiplicativeLR and ChainedScheduler, in float64.

Adadelta and ASGD run on two parameters in two groups (the second with options of its own, given
in full as wick's groups take them: a PyTorch group inherits the options it leaves out), p = [0.5, -1.25, 2.0, 0.75, -0.3, 1.1] (shape [2, 3]) and
q = [-2.0, 0.4, 1.5, 0.01], with the gradient c * x + d set by hand before each step (c and d of
tests/support/optim_reference_common.h). Each row holds p and q after a step (ASGD's also its ax
averages and each parameter's eta and mu). LBFGS runs step(closure) a few times on a coupled
quadratic over two parameters and on the Rosenbrock function; each row holds the parameters, the
loss step() returned and the state's func_evals and n_iter after a step. The scheduler tables hold
each group's lr (SGD, lr 0.1 and 0.03) after construction and after each step. Values are written
with repr(), which reads back as the same double.

Usage: /usr/bin/python3 tests/data/optim_third.py tests/nn/optim_third_torch.h
Needs Debian's python3-torch (1.13).
"""
import sys

import torch
from torch.optim import lr_scheduler as S

F64 = torch.float64  # explicit: ASGD's eta and mu stay float32 tensors, as under the default dtype
P0 = [0.5, -1.25, 2.0, 0.75, -0.3, 1.1]
Q0 = [-2.0, 0.4, 1.5, 0.01]
C = ([1.0, 0.5, 2.0, 0.1, 3.0, 0.7], [0.3, 1.7, 0.9, 2.5])
D = ([0.2, -0.4, 0.1, 0.9, -1.0, 0.05], [-0.6, 0.8, 0.0, 0.3])


def two_groups(cls, first, second, steps, extra=None):
    p = torch.tensor(P0, dtype=F64).reshape(2, 3).requires_grad_(True)
    q = torch.tensor(Q0, dtype=F64).requires_grad_(True)
    o = cls([{'params': [p]}, dict(second, params=[q])], **first)
    rows = []
    for _ in range(steps):
        for x, c, d in ((p, C[0], D[0]), (q, C[1], D[1])):
            x.grad = torch.tensor(c, dtype=F64).reshape(x.shape) * x.detach() + torch.tensor(d, dtype=F64).reshape(x.shape)
        o.step()
        r = p.detach().flatten().tolist() + q.detach().tolist()
        if extra:
            r += extra(o, p, q)
        rows.append(r)
    return rows


def asgd_extra(o, p, q):
    sp, sq = o.state[p], o.state[q]
    return (sp['ax'].flatten().tolist() + sq['ax'].tolist() +
            [sp['eta'].item(), sp['mu'].item(), sq['eta'].item(), sq['mu'].item()])


def quadratic(a, b):
    x = torch.cat([a, b])
    c = torch.tensor([1.0, 3.0, 0.5, 2.0, 1.5], dtype=F64)
    d = torch.tensor([0.5, -1.0, 0.25, 2.0, -0.75], dtype=F64)
    return 0.5 * (c * x * x).sum() + (d * x).sum() + 0.3 * x.sum() ** 2


def rosenbrock(a, b):
    return (1 - a[0]) ** 2 + 100 * (a[1] - a[0] ** 2) ** 2 + 0 * b.sum()


def lbfgs(problem, steps, **kw):
    a = torch.tensor([-1.5, 2.0, 0.5] if problem is quadratic else [-1.5, 2.0], dtype=F64).requires_grad_(True)
    b = torch.tensor([1.0, -0.5], dtype=F64).requires_grad_(True)
    o = torch.optim.LBFGS([a, b], **kw)

    def closure():
        o.zero_grad()
        loss = problem(a, b)
        loss.backward()
        return loss

    rows = []
    for _ in range(steps):
        loss = o.step(closure)
        st = o.state[a]
        rows.append(a.detach().tolist() + b.detach().tolist() + [loss.item(), st['func_evals'], st['n_iter']])
    return rows


def lrs(make, steps):
    p, q = torch.nn.Parameter(torch.ones(1)), torch.nn.Parameter(torch.ones(1))
    o = torch.optim.SGD([{'params': [p]}, {'params': [q], 'lr': 0.03}], lr=0.1)
    s = make(o)
    rows = [[g['lr'] for g in o.param_groups]]
    for _ in range(steps):
        o.step()
        s.step()
        rows.append([g['lr'] for g in o.param_groups])
    return rows


ADADELTA = torch.optim.Adadelta
ASGD = torch.optim.ASGD
LBFGS = torch.optim.LBFGS
CASES = [
    ('adadelta', 'Adadelta([{p}, {q, lr=0.5, rho=0.8, eps=1e-4, weight_decay=0, maximize=True}], weight_decay=0.1)',
     lambda: two_groups(ADADELTA, {'weight_decay': 0.1},
                        {'lr': 0.5, 'rho': 0.8, 'eps': 1e-4, 'weight_decay': 0, 'maximize': True}, 6)),
    ('adadelta_defaults', 'Adadelta([{p}, {q, rho=0.5, weight_decay=0.2}])',
     lambda: two_groups(ADADELTA, {}, {'rho': 0.5, 'weight_decay': 0.2}, 6)),
    ('asgd', 'ASGD([{p}, {q, lr=0.2, lambd=0.01, alpha=0.5, t0=0, weight_decay=0, maximize=True}], lr=0.05, '
     'lambd=0.1, t0=2, weight_decay=0.1)',
     lambda: two_groups(ASGD, {'lr': 0.05, 'lambd': 0.1, 't0': 2, 'weight_decay': 0.1},
                        {'lr': 0.2, 'lambd': 0.01, 'alpha': 0.5, 't0': 0, 'weight_decay': 0, 'maximize': True}, 6,
                        asgd_extra)),
    ('asgd_defaults', 'ASGD([{p}, {q, t0=3}])', lambda: two_groups(ASGD, {}, {'t0': 3}, 6, asgd_extra)),
    ('lbfgs_quadratic', 'LBFGS([a, b], max_iter=4), quadratic, 3 steps', lambda: lbfgs(quadratic, 3, max_iter=4)),
    ('lbfgs_quadratic_wolfe', 'LBFGS([a, b], max_iter=3, history_size=2, line_search_fn="strong_wolfe"), quadratic',
     lambda: lbfgs(quadratic, 3, max_iter=3, history_size=2, line_search_fn='strong_wolfe')),
    ('lbfgs_rosenbrock', 'LBFGS([a, b], lr=0.1, max_iter=10, history_size=5), Rosenbrock, 4 steps',
     lambda: lbfgs(rosenbrock, 4, lr=0.1, max_iter=10, history_size=5)),
    ('lbfgs_rosenbrock_wolfe', 'LBFGS([a, b], max_iter=8, line_search_fn="strong_wolfe"), Rosenbrock, 4 steps',
     lambda: lbfgs(rosenbrock, 4, max_iter=8, line_search_fn='strong_wolfe')),
    ('multiplicative_lr', 'S.MultiplicativeLR(o, lambda e: 0.95)', lambda: lrs(lambda o: S.MultiplicativeLR(o, lambda e: 0.95), 8)),
    ('multiplicative_lr_per_group', 'S.MultiplicativeLR(o, [lambda e: 0.9, lambda e: 1 - 0.05 * e])',
     lambda: lrs(lambda o: S.MultiplicativeLR(o, [lambda e: 0.9, lambda e: 1 - 0.05 * e]), 8)),
    ('chained_constant_exponential', 'S.ChainedScheduler([S.ConstantLR(o, factor=0.1, total_iters=2), '
     'S.ExponentialLR(o, gamma=0.9)])',
     lambda: lrs(lambda o: S.ChainedScheduler([S.ConstantLR(o, factor=0.1, total_iters=2),
                                               S.ExponentialLR(o, gamma=0.9)]), 6)),
    ('chained_multiplicative_step', 'S.ChainedScheduler([S.MultiplicativeLR(o, lambda e: 0.95), '
     'S.StepLR(o, step_size=3, gamma=0.5), S.LinearLR(o, start_factor=0.5, total_iters=4)])',
     lambda: lrs(lambda o: S.ChainedScheduler([S.MultiplicativeLR(o, lambda e: 0.95), S.StepLR(o, step_size=3, gamma=0.5),
                                               S.LinearLR(o, start_factor=0.5, total_iters=4)]), 8)),
]


def cpp_double(x):
    return repr(float(x))


def main():
    out = ['#pragma once',
           '// Generated by tests/data/optim_third.py with PyTorch ' + torch.__version__ + '; do not edit.',
           '// Rows as that script describes them, one a line, with the Python call above each table.',
           '#include <vector>', '', '// clang-format off', 'namespace wick::optim::testing::torch113_third {', '']
    for name, text, run in CASES:
        out.append('// ' + text)
        out.append('inline const std::vector<std::vector<double>> ' + name + ' = {')
        for r in run():
            out.append('    {' + ', '.join(cpp_double(x) for x in r) + '},')
        out.append('};')
        out.append('')
    out += ['}  // namespace wick::optim::testing::torch113_third', '// clang-format on']
    with open(sys.argv[1], 'w') as f:
        f.write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
