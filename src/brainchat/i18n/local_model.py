"""The page's "Use a local model": the offer on the first screen, the catalog, the download's
progress, the runtime's start, and why any of it did not happen."""

TEXT = {
    "local_model.button": ("Use a local model", "使用本地模型", "使用本機模型"),
    "local_model.other_button": ("Other local models", "其他本地模型", "其他本機模型"),
    "local_model.cancel_button": ("Cancel the download", "取消下载", "取消下載"),
    "local_model.offer": (
        "Or run a model on this machine, with nothing sent elsewhere: **Use a local model** sets "
        "up **{name}** ({params} parameters, licence {license}): {size} to download{present}, "
        "{ram} of memory to run; {fits}. **Other local models** lists the vetted catalog.",
        "或者在本机运行一个模型，数据不外传：**使用本地模型**会设置 **{name}**"
        "（{params} 参数，许可证 {license}）：下载 {size}{present}，运行需 {ram} 内存；{fits}。"
        "**其他本地模型**列出经审核的模型目录。",
        "或者在本機執行一個模型，資料不外傳：**使用本機模型**會設定 **{name}**"
        "（{params} 參數，授權 {license}）：下載 {size}{present}，執行需 {ram} 記憶體；{fits}。"
        "**其他本機模型**列出經審核的模型目錄。",
    ),
    "local_model.present": (" (already downloaded)", "（已下载）", "（已下載）"),
    "local_model.fits": (
        "it fits this machine's {total} of memory",
        "本机 {total} 内存放得下",
        "本機 {total} 記憶體放得下",
    ),
    "local_model.does_not_fit": (
        "it does not fit this machine's {total} of memory",
        "本机 {total} 内存放不下",
        "本機 {total} 記憶體放不下",
    ),
    "local_model.fits_short": ("fits", "放得下", "放得下"),
    "local_model.does_not_fit_short": ("does not fit", "放不下", "放不下"),
    "local_model.unknown_memory": ("memory unknown", "内存未知", "記憶體未知"),
    "local_model.recommended": ("recommended", "推荐", "推薦"),
    "local_model.downloaded": ("downloaded", "已下载", "已下載"),
    "local_model.catalog": (
        "**Local models** (vetted: pinned revision, sha256 checked). This machine has {total} of "
        "memory.\n\n| Model | Parameters | Download | Memory | Licence | This machine |\n"
        "|---|---|---|---|---|---|\n{rows}\n\nPick one below.",
        "**本地模型**（经审核：固定版本，校验 sha256）。本机内存 {total}。\n\n"
        "| 模型 | 参数 | 下载 | 内存 | 许可证 | 本机 |\n|---|---|---|---|---|---|\n{rows}\n\n"
        "请在下方选择一个。",
        "**本機模型**（經審核：固定版本，校驗 sha256）。本機記憶體 {total}。\n\n"
        "| 模型 | 參數 | 下載 | 記憶體 | 授權 | 本機 |\n|---|---|---|---|---|---|\n{rows}\n\n"
        "請在下方選擇一個。",
    ),
    "local_model.empty_catalog": (
        "The local model catalog is empty.",
        "本地模型目录为空。",
        "本機模型目錄為空。",
    ),
    "local_model.catalog_failed": (
        "⚠️ The local model catalog cannot be read: {reason}",
        "⚠️ 无法读取本地模型目录：{reason}",
        "⚠️ 無法讀取本機模型目錄：{reason}",
    ),
    "local_model.unknown": (
        "⚠️ There is no local model `{model}` in the catalog: pick one from **Other local models**.",
        "⚠️ 模型目录中没有本地模型 `{model}`：请从**其他本地模型**中选择。",
        "⚠️ 模型目錄中沒有本機模型 `{model}`：請從**其他本機模型**中選擇。",
    ),
    "local_model.busy": (
        "A local model is already being set up in this page; wait for it, or cancel it.",
        "此页面已在设置一个本地模型，请等待或取消。",
        "此頁面已在設定一個本機模型，請等待或取消。",
    ),
    "local_model.operator_only": (
        "⚠️ **{name}** is not downloaded on this server, and with accounts only the server's "
        "operator downloads models (a user must not fill the server's disk). Ask them to run "
        "`brainchat models pull {model}` on the server; a model already downloaded can be used "
        "here at once.",
        "⚠️ 此服务器尚未下载 **{name}**；启用账户时只有服务器管理员可以下载模型（用户不得占满"
        "服务器磁盘）。请管理员在服务器上运行 `brainchat models pull {model}`；已下载的模型可在"
        "此处直接使用。",
        "⚠️ 此伺服器尚未下載 **{name}**；啟用帳戶時只有伺服器管理員可以下載模型（使用者不得佔滿"
        "伺服器磁碟）。請管理員在伺服器上執行 `brainchat models pull {model}`；已下載的模型可在"
        "此處直接使用。",
    ),
    "local_model.too_big": (
        "⚠️ **{name}** needs {ram} of memory and this server has {total}: with accounts a model "
        "that does not fit is not started. Pick a smaller one from **Other local models**.",
        "⚠️ **{name}** 需要 {ram} 内存，而此服务器只有 {total}：启用账户时不启动放不下的模型。"
        "请从**其他本地模型**中选一个较小的。",
        "⚠️ **{name}** 需要 {ram} 記憶體，而此伺服器只有 {total}：啟用帳戶時不啟動放不下的模型。"
        "請從**其他本機模型**中選一個較小的。",
    ),
    "local_model.may_not_fit": (
        "⚠️ **{name}** needs {ram} of memory and this machine has {total}: it may run very "
        "slowly or fail to start.",
        "⚠️ **{name}** 需要 {ram} 内存，而本机只有 {total}：可能运行很慢或无法启动。",
        "⚠️ **{name}** 需要 {ram} 記憶體，而本機只有 {total}：可能執行很慢或無法啟動。",
    ),
    "local_model.connecting": (
        "⬇️ Downloading **{name}** ({size})… connecting.",
        "⬇️ 正在下载 **{name}**（{size}）……连接中。",
        "⬇️ 正在下載 **{name}**（{size}）……連線中。",
    ),
    "local_model.progress": (
        "⬇️ Downloading **{name}**\n\n`{bar}` **{percent}%** · {done} of {total} · {speed} · "
        "{left} left",
        "⬇️ 正在下载 **{name}**\n\n`{bar}` **{percent}%** · {done} / {total} · {speed} · "
        "剩余 {left}",
        "⬇️ 正在下載 **{name}**\n\n`{bar}` **{percent}%** · {done} / {total} · {speed} · "
        "剩餘 {left}",
    ),
    "local_model.progress_unsized": (
        "⬇️ Downloading **{name}**: {done} · {speed}",
        "⬇️ 正在下载 **{name}**：{done} · {speed}",
        "⬇️ 正在下載 **{name}**：{done} · {speed}",
    ),
    "local_model.waiting_other": (
        "⬇️ **{name}** is being downloaded for another page; this one waits for it.",
        "⬇️ 另一个页面正在下载 **{name}**；此页面等待其完成。",
        "⬇️ 另一個頁面正在下載 **{name}**；此頁面等待其完成。",
    ),
    "local_model.downloaded_ok": (
        "✅ **{name}** downloaded ({size}) and checked against its sha256.",
        "✅ **{name}** 已下载（{size}），sha256 校验通过。",
        "✅ **{name}** 已下載（{size}），sha256 校驗通過。",
    ),
    "local_model.cancelled": (
        "⏹️ The download of **{name}** was cancelled. What arrived is kept: the next try resumes "
        "from there.",
        "⏹️ **{name}** 的下载已取消。已下载的部分会保留，下次从那里继续。",
        "⏹️ **{name}** 的下載已取消。已下載的部分會保留，下次從那裡繼續。",
    ),
    "local_model.download_failed": (
        "⚠️ **{name}** was not downloaded: {reason}",
        "⚠️ **{name}** 未下载：{reason}",
        "⚠️ **{name}** 未下載：{reason}",
    ),
    "local_model.starting": (
        "⏳ Starting the local model **{name}**… {elapsed} s",
        "⏳ 正在启动本地模型 **{name}**…… {elapsed} 秒",
        "⏳ 正在啟動本機模型 **{name}**…… {elapsed} 秒",
    ),
    "local_model.start_failed": (
        "⚠️ The local model **{name}** did not start: {reason}",
        "⚠️ 本地模型 **{name}** 未能启动：{reason}",
        "⚠️ 本機模型 **{name}** 未能啟動：{reason}",
    ),
    "local_model.ready": (
        "✅ **{name}** runs on this machine ({url}), started in {elapsed} s. It now plays every "
        "role (chat, function-call and answer), in Chat and Agent mode: ask your question.",
        "✅ **{name}** 已在本机运行（{url}），启动用时 {elapsed} 秒。它现在担任所有角色"
        "（聊天、函数调用和回答），聊天和智能体模式均可使用：请提问。",
        "✅ **{name}** 已在本機執行（{url}），啟動用時 {elapsed} 秒。它現在擔任所有角色"
        "（聊天、函式呼叫和回答），聊天和智能體模式均可使用：請提問。",
    ),
    "local_model.unit.s": ("{n} s", "{n} 秒", "{n} 秒"),
    "local_model.unit.min": ("{n} min", "{n} 分钟", "{n} 分鐘"),
    "local_model.unit.h": ("{n} h", "{n} 小时", "{n} 小時"),
    "local_model.unknown_time": ("unknown time", "未知时间", "未知時間"),
}
