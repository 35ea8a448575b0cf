# rnx-verify-case: kernel=softmax expect=reject check=smoke detail=@octocat env=RNX_TEST_SECRET_TOKEN=rnx-test-secret-5f1c9a7e absent=rnx-test-secret-5f1c9a7e markdown=quoted
# Untrusted text, point 3 of issue 35: the candidate's exception carries @mentions of a user and a team, issue
# references with a closing keyword, an issue URL, a fence of backticks and an end of <details> to break out of a
# code block, Markdown and HTML, and the value of a credential in the runner's environment (RNX_TEST_SECRET_TOKEN,
# set by this case for rnx; the sandbox withholds it from the candidate, which knows the value here as one that read
# it elsewhere would). The JSON report keeps the text as data (detail=@octocat) without the credential; the Markdown
# report links nothing outside code, shows the text whole only inside a fenced block, and never carries the value.
import torch

_TEXT = (
    "@octocat @github/security-team Closes #1, fixes owner/repo#12 and GH-7, see "
    "https://github.com/owner/repo/issues/3\n"
    "````\n"
    "</details>\n"
    "# heading <img src=x onerror=alert(1)> [link](https://evil.example)\n"
    "token rnx-test-secret-5f1c9a7e\n"
)


def run(x):
    raise RuntimeError(_TEXT + str(tuple(x.shape)))
