"""Static immediate post-dominators: hand-made CFGs and real code objects."""
from dcgraph.analysis.postdominators import EXIT, FrameFlow, immediate_postdominators


def test_diamond_if_else_join():
    #   0 -> 1, 2 ; 1 -> 3 ; 2 -> 3 ; 3 returns
    assert immediate_postdominators([(1, 2), (3,), (3,), ()]) == [3, 3, 3, EXIT]


def test_if_without_else_and_early_return():
    #   0 -> 1 (then), 2 (join);  1 -> 2;  2 -> 3, 4;  3 returns;  4 returns
    assert immediate_postdominators([(2, 1), (2,), (4, 3), (), ()]) == [2, 2, EXIT, EXIT, EXIT]


def test_loop_with_exit():
    #   0 -> 1 ; 1 (test) -> 2 (body), 3 (exit) ; 2 -> 1 ; 3 returns
    assert immediate_postdominators([(1,), (2, 3), (1,), ()]) == [1, 3, 1, EXIT]


def test_infinite_loop_has_no_postdominator():
    #   0 -> 1 ; 1 -> 2, 1 ; 2 -> 1  (no way out)
    assert immediate_postdominators([(1,), (2, 1), (1,)]) == [EXIT, EXIT, EXIT]


def test_loop_with_break_and_return():
    #   0 -> 1 ; 1 -> 2, 4 ; 2 -> 3, 1 (continue) ; 3 (break) -> 4 ; 4 returns
    assert immediate_postdominators([(1,), (2, 4), (3, 1), (4,), ()]) == [1, 4, 4, 4, EXIT]


def _branchy(x):
    if x > 0:
        y = 1
    else:
        y = 2
    for k in range(3):
        y += k
    return y


def test_frame_flow_of_a_real_function():
    flow = FrameFlow(_branchy.__code__)
    first_cond = next(b for b in range(flow.nblocks) if len(flow.succs[b]) == 2)
    join = flow.ipdom[first_cond]
    # both arms of the if/else reach the join without passing each other
    then_block, else_block = flow.succs[first_cond]
    assert flow.ipdom[then_block] == join and flow.ipdom[else_block] == join
    loop = [b for b in range(flow.nblocks) if b > join and len(flow.succs[b]) == 2]
    assert loop, "the for loop's FOR_ITER block"
    for_iter = loop[0]
    after_loop, body = flow.succs[for_iter]          # FOR_ITER jumps out, falls into the body
    assert flow.ipdom[for_iter] == after_loop
    assert flow.ipdom[body] == for_iter               # the body always returns to the test
    assert flow.ipdom[after_loop] == EXIT
    assert flow.unique_successor(first_cond) is None
