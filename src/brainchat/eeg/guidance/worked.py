"""Worked examples: EEG requests, in English and Chinese, and the calls that carry them out.

A small model shown two requests like the user's, with the calls a researcher would make, maps
"8-30 Hz" to l_freq/h_freq, "留一被试" to protocol cross_subject and "剔除超过 100 微伏" to
reject_uv better than any rule could tell it. File names are never spelled out: the files come
from the listing (written <like this>), so an example gives no name to copy.
"""

from __future__ import annotations

from typing import Any

Call = tuple[str, dict[str, Any]]
ALL_LISTED = "<the files the listing shows>"


def _l(files: str = ALL_LISTED) -> Call:
    return ("load_data", {"files": files})


BP = ("bandpass_filter", {"l_freq": 8, "h_freq": 30})
EP = ("epoch_data", {"tmin": 0.5, "tmax": 2.5})

EXAMPLES: tuple[tuple[str, tuple[Call, ...]], ...] = (
    ("Which EEG files do I have?", (("list_data_files", {}),)),
    ("我的数据里有哪些记录？", (("list_data_files", {}),)),
    ("Load subject 3's recordings.", (_l("<subject 3's files, as listed>"),)),
    ("加载 sub-02 的第二个会话", (_l("<sub-02 session 2's file, as listed>"),)),
    ("Load the first three files.", (_l("<the first three files of the listing>"),)),
    ("把最后一个文件读进来", (_l("<the last file of the listing>"),)),
    ("Load the first file and the last one, then band-pass 1-40 Hz.",
     (_l("<the first and the last file of the listing>"), ("bandpass_filter", {"l_freq": 1, "h_freq": 40}))),  # fmt: skip
    ("What is in the loaded data? Channels, events, duration.", (("get_study_state", {}),)),
    ("现在的数据有多少通道和事件？", (("get_study_state", {}),)),
    ("Band-pass the data 1-40 Hz and re-reference to the average.",
     (("bandpass_filter", {"l_freq": 1, "h_freq": 40}), ("set_reference", {"ref": "average"}))),
    ("对数据做 0.5-45 Hz 带通滤波，再去掉 50 Hz 工频", (("bandpass_filter", {"l_freq": 0.5, "h_freq": 45}), ("notch_filter", {"freqs": [50]}))),  # fmt: skip
    ("Remove 60 Hz line noise and downsample to 100 Hz.", (("notch_filter", {"freqs": [60]}), ("resample_data", {"sfreq": 100}))),  # fmt: skip
    ("降采样到 128 Hz", (("resample_data", {"sfreq": 128}),)),
    ("Cut epochs from -0.5 to 3 s with a baseline from -0.5 to 0.", (("epoch_data", {"tmin": -0.5, "tmax": 3, "baseline": [-0.5, 0]}),)),  # fmt: skip
    ("按 0 到 4 秒切分试次，剔除超过 100 微伏的试次", (("epoch_data", {"tmin": 0, "tmax": 4, "reject_uv": 100}),)),
    ("Drop trials whose amplitude exceeds 150 µV.", (("epoch_data", {"tmin": 0.5, "tmax": 2.5, "reject_uv": 150}),)),  # fmt: skip
    ("Load everything, filter 8-30 Hz, epoch 0.5-2.5 s, split by trial, train EEGNet and report test accuracy.",
     (_l(), BP, EP, ("split_dataset", {"by": "trial"}), ("train_model", {"model": "eegnet"}), ("evaluate_model", {"model": "eegnet"}))),  # fmt: skip
    ("先 4-40 Hz 带通，然后用 sub-02 两次记录的数据训练 EEGNet，报告测试准确率",
     (_l("<sub-02's two sessions, as listed>"), ("bandpass_filter", {"l_freq": 4, "h_freq": 40}), EP,
      ("split_dataset", {"by": "trial"}), ("train_model", {"model": "eegnet"}), ("evaluate_model", {"model": "eegnet"}))),  # fmt: skip
    ("Train on session 1 and test on session 2 with CSP+LDA.",
     (_l("<the subject's two sessions, as listed>"), BP, EP, ("split_dataset", {"by": "session"}),
      ("train_model", {"model": "csp_lda"}), ("evaluate_model", {"model": "csp_lda"}))),  # fmt: skip
    ("用第一个会话训练、第二个会话测试，模型用 ShallowConvNet",
     (_l("<both sessions, as listed>"), BP, EP, ("split_dataset", {"by": "session"}),
      ("train_model", {"model": "shallowconvnet"}), ("evaluate_model", {"model": "shallowconvnet"}))),  # fmt: skip
    ("Is left versus right hand imagery separable in this subject?",
     (_l("<the subject's files, as listed>"), BP, EP, ("cross_validate", {"pipelines": ["csp_lda"]}))),
    ("这个被试的左右手想象能分开吗？",
     (_l("<the subject's files, as listed>"), BP, EP, ("cross_validate", {"pipelines": ["csp_lda"]}))),
    ("Which is better here, CSP+LDA or the Riemannian tangent-space classifier?",
     (BP, EP, ("cross_validate", {"pipelines": ["csp_lda", "ts_lr"]}))),
    ("CSP+LDA 跟切空间分类器比，哪个效果好？", (BP, EP, ("cross_validate", {"pipelines": ["csp_lda", "ts_lr"]}))),  # fmt: skip
    ("Compare MDM with filter-bank CSP across sessions.",
     (BP, EP, ("cross_validate", {"protocol": "cross_session", "pipelines": ["mdm", "fbcsp"]}))),
    ("跨会话比较 MDM 和 FBCSP", (BP, EP, ("cross_validate", {"protocol": "cross_session", "pipelines": ["mdm", "fbcsp"]}))),  # fmt: skip
    ("Would the decoder work on a person it has never seen?",
     (_l(), BP, EP, ("cross_validate", {"protocol": "cross_subject", "pipelines": ["csp_lda"]}))),
    ("换一个没见过的被试，这个解码器还有效吗？",
     (_l(), BP, EP, ("cross_validate", {"protocol": "cross_subject", "pipelines": ["csp_lda"]}))),
    ("Leave one subject out with TS+LR and 100 permutations.",
     (BP, EP, ("cross_validate", {"protocol": "cross_subject", "pipelines": ["ts_lr"], "permutations": 100}))),  # fmt: skip
    ("留一被试交叉验证 EEGNet，训练 20 轮",
     (BP, EP, ("cross_validate", {"protocol": "cross_subject", "pipelines": ["eegnet"], "epochs": 20}))),  # fmt: skip
    ("Does it generalize to a later session of the same person?",
     (BP, EP, ("cross_validate", {"protocol": "cross_session", "pipelines": ["csp_lda"]}))),
    ("10-fold cross-validation within each session for CSP+LDA.",
     (BP, EP, ("cross_validate", {"protocol": "within_session", "folds": 10, "pipelines": ["csp_lda"]}))),  # fmt: skip
    ("在每个会话内做 5 折交叉验证，比较 CSP+LDA 和 MDM",
     (BP, EP, ("cross_validate", {"protocol": "within_session", "folds": 5, "pipelines": ["csp_lda", "mdm"]}))),  # fmt: skip
    ("Is the accuracy above chance?", (EP, ("cross_validate", {"pipelines": ["csp_lda"], "permutations": 100}))),  # fmt: skip
    ("准确率高于机会水平吗？", (EP, ("cross_validate", {"pipelines": ["csp_lda"], "permutations": 100}))),  # fmt: skip
    ("Is my data clean?", (_l(), ("plot_raw", {}), ("plot_psd", {}), ("epoch_data", {"tmin": 0.5, "tmax": 2.5, "reject_uv": 150}))),  # fmt: skip
    ("数据质量怎么样？有没有坏段？", (_l(), ("plot_raw", {}), ("plot_psd", {}), ("epoch_data", {"tmin": 0.5, "tmax": 2.5, "reject_uv": 150}))),  # fmt: skip
    ("Plot the power spectrum from 1 to 40 Hz.", (("plot_psd", {"fmin": 1, "fmax": 40}),)),
    ("画出功率谱密度图", (("plot_psd", {}),)),
    ("Show the alpha-band topography, 8-12 Hz.", (("set_montage", {}), ("plot_topomap", {"fmin": 8, "fmax": 12}))),  # fmt: skip
    ("画 mu 频段（8-13 Hz）的地形图", (("set_montage", {}), ("plot_topomap", {"fmin": 8, "fmax": 13}))),
    ("Show the raw signal of C3 and C4 for the first 20 seconds.",
     (("plot_raw", {"channels": ["C3", "C4"], "duration": 20}),)),
    ("Average the epochs per class at C3, Cz and C4.", (("plot_epochs_average", {"channels": ["C3", "Cz", "C4"]}),)),  # fmt: skip
    ("Run ICA with 15 components and show them.", (("ica_fit", {"n_components": 15}), ("ica_components", {}))),  # fmt: skip
    ("做 ICA 去除眼电，先看看成分", (("ica_fit", {"n_components": 15}), ("ica_components", {}))),
    ("Remove ICA components 0 and 3.", (("ica_apply", {"exclude": [0, 3]}),)),
    ("Keep only the central channels C3, Cz and C4.", (("select_channels", {"keep": ["C3", "Cz", "C4"]}),)),  # fmt: skip
    ("Export what we did as a Python script.", (("export_analysis", {}),)),
    ("把分析过程导出成脚本和报告", (("export_analysis", {}),)),
    ("Save the epochs as BIDS derivatives.", (("save_bids_derivatives", {}),)),
    ("Undo the preprocessing.", (("reset_preprocessing", {}),)),
    ("清空当前的研究，重新开始", (("clear_study", {}),)),
    ("Evaluate the model I trained.", (("evaluate_model", {}),)),
    ("评估刚才训练的模型", (("evaluate_model", {}),)),
    # a question about a result reads it; it never trains again (the summary carries the scores)
    ("Why is the test accuracy so high?", (("get_study_state", {}),)),
    ("为什么准确率这么高？", (("get_study_state", {}),)),
    ("Compare the models I trained so far.", (("get_study_state", {}),)),
    ("比较一下目前训练过的模型", (("get_study_state", {}),)),
    ("What does the literature say about mu rhythm desynchronisation? Cite sources.",
     (("web_search", {"query": "mu rhythm event-related desynchronization motor imagery"}),)),
    ("EEGNet 的结构是什么？请引用文献", (("web_search", {"query": "EEGNet architecture compact CNN"}),)),
    ("Look up on the internet which file formats MNE-Python reads.", (("web_search", {"query": "MNE-Python supported EEG file formats"}),)),  # fmt: skip
    ("上网查一下 MNE-Python 支持读取哪些 EEG 文件格式", (("web_search", {"query": "MNE-Python supported EEG file formats"}),)),  # fmt: skip
    ("上网搜一下 Riemannian 几何在脑机接口里的应用，给出处", (("web_search", {"query": "Riemannian geometry brain-computer interface"}),)),  # fmt: skip
    ("Where does my analysis stand right now?", (("get_study_state", {}),)),
    ("我的分析现在进行到哪一步了？", (("get_study_state", {}),)),
    ("Show the state of my study: what is loaded and what was done to it.", (("get_study_state", {}),)),  # fmt: skip
    ("看一下研究现在的状态：加载了什么，做过哪些处理", (("get_study_state", {}),)),
    ("把平均参考加上", (("set_reference", {"ref": "average"}),)),
    ("只保留 C3、Cz、C4 三个通道", (("select_channels", {"keep": ["C3", "Cz", "C4"]}),)),
    ("去掉第 1 和第 4 个 ICA 成分", (("ica_apply", {"exclude": [1, 4]}),)),
    ("撤销所有预处理，回到原始数据", (("reset_preprocessing", {}),)),
    ("Clear the study and start over.", (("clear_study", {}),)),
    ("把分好的试次存成 BIDS 衍生数据", (("save_bids_derivatives", {}),)),
    ("Overwrite the BIDS derivatives saved before.", (("replace_bids_derivatives", {}),)),
    ("覆盖之前保存的 BIDS 衍生数据", (("replace_bids_derivatives", {}),)),
    ("画出 C3 和 Cz 上每一类的平均波形", (("plot_epochs_average", {"channels": ["C3", "Cz"]}),)),
    ("看一下前 10 秒的原始波形", (("plot_raw", {"duration": 10}),)),
    ("Which channel has the most alpha power (8-12 Hz)?",
     (_l(), ("band_power", {"bands": [{"name": "alpha", "fmin": 8, "fmax": 12}]}))),
    ("计算每个通道的 theta 和 beta 频段相对功率", (("band_power", {"bands": ["theta", "beta"]}),)),
    ("Give me the ERP peaks between 250 and 500 ms and the left minus right difference wave.",
     (("epoch_data", {"tmin": -0.2, "tmax": 0.8, "baseline": [-0.2, 0]}),
      ("erp_analysis", {"window": [0.25, 0.5], "differences": [["left_hand", "right_hand"]]}))),
    ("比较两类的事件相关电位，给出 300 毫秒附近的峰值和潜伏期",
     (("epoch_data", {"tmin": -0.2, "tmax": 0.8, "baseline": [-0.2, 0]}),
      ("erp_analysis", {"window": [0.2, 0.4], "plot": "compare"}))),
    ("Show the mu ERD/ERS relative to a -1 to 0 s baseline.",
     (("epoch_data", {"tmin": -1, "tmax": 3}), ("time_frequency", {"bands": ["mu"], "baseline": [-1, 0]}))),  # fmt: skip
    ("做时频分析，看 beta 频段的事件相关去同步，单位用 dB",
     (("epoch_data", {"tmin": -1, "tmax": 3}), ("time_frequency", {"bands": ["beta"], "mode": "logratio"}))),  # fmt: skip
    ("Is the ERP different between the two conditions? Use a cluster permutation test.",
     (("cluster_test", {"measure": "erp", "n_permutations": 1000}),)),
    ("用基于簇的置换检验比较左右手的 mu 功率",
     (("epoch_data", {"tmin": -1, "tmax": 3}), ("cluster_test", {"measure": "tfr", "band": "mu"}))),
    ("Find bad channels and noisy segments, but don't remove anything yet.", (("find_artifacts", {}),)),
    ("检查有没有坏导和坏段", (("find_artifacts", {}),)),
    ("Which ICA components are blinks?", (("ica_fit", {"n_components": 15}), ("ica_find_artifacts", {}))),  # fmt: skip
    ("找出和眼电、心电相关的 ICA 成分", (("ica_find_artifacts", {}),)),
    ("Interpolate the bad channels T7 and F8.", (("mark_bad_channels", {"channels": ["T7", "F8"]}),)),  # fmt: skip
    ("把坏导 Fz 删掉", (("mark_bad_channels", {"channels": ["Fz"], "action": "drop"}),)),
    ("Mark 12 to 15 s as a bad segment.", (("annotate_bad_segments", {"segments": [{"onset": 12, "duration": 3}]}),)),  # fmt: skip
    ("把 30 秒到 32 秒标成坏段", (("annotate_bad_segments", {"segments": [{"onset": 30, "duration": 2}]}),)),  # fmt: skip
    ("Download BNCI2014_001 subjects 1 and 2 from MOABB.", (("fetch_dataset", {"dataset": "BNCI2014_001", "subjects": ["1", "2"]}),)),  # fmt: skip
    ("从 OpenNeuro 下载 ds002778 数据集", (("fetch_dataset", {"dataset": "ds002778"}),)),
)  # fmt: skip


def calls_text(calls: tuple[Call, ...]) -> str:
    """The calls as one line: name(key=value, ...) → ..., a listing's files in <brackets>."""
    import json

    def arg(value: Any) -> str:
        if isinstance(value, str) and value.startswith("<"):
            return value
        return json.dumps(value, ensure_ascii=False)

    return " → ".join(
        f"{name}({', '.join(f'{k}={arg(v)}' for k, v in args.items())})" for name, args in calls
    )


# the files an example picks by their place in the listing (1 the first, -1 the last)
POSITIONS = {
    "<the first three files of the listing>": [1, 2, 3],
    "<the last file of the listing>": [-1],
    "<the first and the last file of the listing>": [1, -1],
}


def record_of(calls: tuple[Call, ...]) -> dict[str, Any]:
    """The record of an example's request, as its calls show it: the steps, the files picked by
    their place, and every value the calls set (the listing's files are no value)."""
    from brainchat.eeg.guidance.steps import STEP_OF

    steps = list(dict.fromkeys(STEP_OF[name].id for name, _ in calls if name in STEP_OF))
    positions: list[int] = []
    fixed: dict[str, dict[str, Any]] = {}
    for name, args in calls:
        for key, value in args.items():
            if isinstance(value, str) and value.startswith("<"):
                positions += POSITIONS.get(value, [])
                continue
            fixed.setdefault(name, {})[key] = value
    web = any(name == "web_search" for name, _ in calls)
    record = {"steps": steps, "positions": positions, "fixed": fixed}
    return {**record, "web": web, "needs_tools": bool(calls)}
