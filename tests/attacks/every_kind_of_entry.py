# problem: rematerialized-mlp-block
# expect: wrong_answer
# jobs: 2
# what: leaves every kind of entry its cleanup must survive, while a right answer runs beside it: wide and deep folders, names with newlines and non-UTF-8 bytes, symlinks to / and to the grader's folders, a fifo, a socket if it can, files and folders with no permissions, its working folder deep inside
import jax
import jax.numpy as jnp

import os
import socket

top = os.getcwd()
made = []


def attempt(what, step):
    try:
        step()
        made.append(what)
    except OSError:  # a layer may refuse this kind (seccomp, Landlock): leave what it can
        pass


def wide_and_deep():
    for i in range(30):  # under the entry cap
        os.makedirs(os.path.join(f"w{i}", *["d"] * 40))


def odd_names():
    os.mkdir(b"odd\n\xff\xfe name")
    open(b"odd\n\xff\xfe name/\x80file\n", "wb").write(b"x")


def sock():
    s = socket.socket(socket.AF_UNIX)
    s.bind("sock")


def locked():
    os.makedirs("locked/inner/deeper")
    open("locked/inner/deeper/f", "w").write("x")
    for path in ("locked/inner/deeper/f", "locked/inner/deeper", "locked/inner", "locked"):
        os.chmod(path, 0)


attempt("wide and deep", wide_and_deep)
attempt("odd names", odd_names)
for name, target in (("to_root", "/"), ("to_parent", ".."), ("to_grader", "/jaxplay"), ("to_self", "to_self"),
                     ("to_tmp", "/tmp"), ("dangling", "/nowhere/at/all")):
    attempt(f"symlink {name}", lambda name=name, target=target: os.symlink(target, name))
attempt("fifo", lambda: os.mkfifo("fifo"))
attempt("socket", sock)
attempt("no permissions", locked)
attempt("cwd deep inside", lambda: os.chdir(os.path.join(top, "w7", *["d"] * 40)))
print("left behind:", ", ".join(made))

def remat_mlp_block(params, x, y):
    return {"loss": jnp.sum(x) * 0.0 + 1.0, "grads": jax.tree.map(jnp.zeros_like, params)}
