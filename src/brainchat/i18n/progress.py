"""What a long step is doing now, the agent run's time, and the Regenerate action."""

TEXT = {
    # the phases of a long step (events.Phase), shown in its title while it runs
    "progress.starting": ("starting the study's process", "正在启动分析进程", "正在啟動分析程序"),
    "progress.restoring": (
        "rebuilding the study from its {steps} saved steps",
        "正在按已保存的 {steps} 个步骤重建研究",
        "正在依已儲存的 {steps} 個步驟重建研究",
    ),
    "progress.waiting": (
        "waiting for its turn (another step is using the computer)",
        "正在排队（另一个步骤正在使用计算资源）",
        "正在排隊（另一個步驟正在使用計算資源）",
    ),
    "progress.preparing": ("preparing the data", "正在准备数据", "正在準備資料"),
    "progress.building": ("building the network", "正在构建网络", "正在建構網路"),
    "progress.training": (
        "training, epoch 1/{epochs} under way",
        "正在训练，第 1/{epochs} 轮进行中",
        "正在訓練，第 1/{epochs} 輪進行中",
    ),
    "progress.epoch": (
        "epoch {epoch}/{epochs}",
        "第 {epoch}/{epochs} 轮",
        "第 {epoch}/{epochs} 輪",
    ),
    "progress.eta": ("ETA {seconds} s", "预计还需 {seconds} 秒", "預計還需 {seconds} 秒"),
    "progress.evaluating": (
        "evaluating on the test set",
        "正在用测试集评估",
        "正在用測試集評估",
    ),
    "progress.fitting": ("fitting {what}", "正在拟合 {what}", "正在擬合 {what}"),
    # the agent run's step: its time while it runs
    "progress.running_for": ("running · {elapsed}", "运行中 · {elapsed}", "執行中 · {elapsed}"),
    # regenerate the last answer
    "progress.regenerate": ("Regenerate", "重新生成", "重新產生"),
    "progress.regenerate_tip": (
        "Ask again: the same question, the same conversation before it",
        "重新提问：同样的问题，同样的对话上下文",
        "重新提問：同樣的問題，同樣的對話脈絡",
    ),
    "progress.regenerate_busy": (
        "A run is under way: stop it first, then regenerate.",
        "正在运行中：请先停止，再重新生成。",
        "正在執行中：請先停止，再重新產生。",
    ),
    "progress.regenerate_stale": (
        "Only the last answer can be regenerated.",
        "只能重新生成最后一个回答。",
        "只能重新產生最後一個回答。",
    ),
    "progress.regenerate_study": (
        "Answering again. The EEG study is not rolled back: what the first answer's steps did "
        "to it still applies, and a step that needs your approval asks again.",
        "重新回答。脑电研究不会回退：第一次回答的步骤对它所做的更改仍然有效，需要您批准的步骤会再次询问。",
        "重新回答。腦電研究不會回退：第一次回答的步驟對它所做的更改仍然有效，需要您核准的步驟會再次詢問。",
    ),
}
